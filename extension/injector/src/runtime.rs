//! The content script's browser side: [`start`] (called by `extension/content.js` with the build
//! that loaded), the `runtime.onMessage` listener and the page's port to the worker
//! ([`use_port`]), announcing the page's tools to the worker (of the adapters whose DOM
//! predicate the page meets), running calls with their deadline and
//! cancellation, and the page's state: pushed after every call of a tool not annotated
//! `read_only`, and answered on request. Also the isolated-world end of WebMCP capture: the tools
//! the page registers itself (relayed by `extension/webmcp.js` as CustomEvents with JSON string
//! details, untrusted) are announced as `webmcp_<name>` and their calls relayed back to the page.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use bridge::adapter::ToolDef;
use bridge::page::{FromPage, RuntimeKind, ToPage};
use bridge::webmcp::{self, PageTool};
use bridge::{ErrorCode, WireError};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};

use crate::state;
use crate::steps::{Outcome, run_tool};
use crate::tools::{Catalog, check_args};
use crate::web_dom::WebDom;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = sendMessage)]
    fn runtime_send_message(message: &str) -> Promise;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime", "onMessage"], js_name = addListener)]
    fn on_message_add_listener(listener: &Function);
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout_js(callback: &Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_namespace = console, js_name = warn)]
    fn console_warn(message: &str);

    /// The `runtime.Port` `content.js` opened to the worker.
    #[derive(Clone)]
    pub type Port;
    #[wasm_bindgen(method, catch, js_name = postMessage)]
    fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method, getter, js_name = onMessage)]
    fn on_message(this: &Port) -> ChromeEvent;
    type ChromeEvent;
    #[wasm_bindgen(method, js_name = addListener)]
    fn add_listener(this: &ChromeEvent, listener: &Function);
}

/// Where an answer to the worker goes: the `sendResponse` of a `tabs.sendMessage`, or the port
/// the request came on (as `[id, text]`, so the worker knows what it answers).
enum Reply {
    Callback(Function),
    Port(Port),
}

impl Reply {
    fn send(&self, id: &str, answer: &FromPage) {
        let text = JsValue::from(encode(answer));
        match self {
            Reply::Callback(send_response) => {
                let _ = send_response.call1(&JsValue::NULL, &text);
            }
            Reply::Port(port) => {
                // A closed port (the worker stopped) fails the call on the worker's side.
                let _ = port.post_message(&js_sys::Array::of2(&JsValue::from(id), &text));
            }
        }
    }
}

pub(crate) fn set_timeout(callback: &Function, ms: f64) {
    set_timeout_js(callback, ms);
}

struct Page {
    runtime: Option<RuntimeKind>,
    /// The adapters the worker sent for this URL, before their DOM predicates.
    offered: Rc<Vec<bridge::adapter::Adapter>>,
    /// Bumped whenever `offered` changes: stale predicate re-checks stop.
    offered_generation: u32,
    catalog: Rc<Catalog>,
    /// Cancellation flags of the calls running now.
    running: HashMap<String, Rc<Cell<bool>>>,
    /// The tools the page registered itself (WebMCP), sanitized.
    page_tools: Rc<Vec<PageTool>>,
    /// Calls of page tools waiting for the page: the `resolve` of each one's promise.
    page_calls: HashMap<String, Function>,
    /// The state last pushed to the worker, so a change of the page pushes only a real change.
    last_state: Option<serde_json::Value>,
    /// Whether the page is observed for changes of its state (from the first adapter with one).
    watching_state: bool,
    /// Whether a check of the state after a change is already scheduled.
    state_check_pending: bool,
}

thread_local! {
    static PAGE: RefCell<Page> = RefCell::new(Page {
        runtime: None,
        offered: Rc::default(),
        offered_generation: 0,
        catalog: Rc::default(),
        running: HashMap::new(),
        page_tools: Rc::default(),
        page_calls: HashMap::new(),
        last_state: None,
        watching_state: false,
        state_check_pending: false,
    });
}

/// The worker's requests also come over `port` (the page's long-lived `tabwire-wake` port;
/// `content.js` hands over each new one after the worker restarted). Only our extension's
/// worker can be at the other end of a port this content script opened.
#[wasm_bindgen]
pub fn use_port(port: Port) {
    let reply_to = port.clone();
    let listener = Closure::<dyn FnMut(JsValue)>::new(move |message: JsValue| {
        if let Some(msg) = message
            .as_string()
            .and_then(|t| serde_json::from_str::<ToPage>(&t).ok())
        {
            handle(msg, Reply::Port(reply_to.clone()));
        }
    });
    port.on_message()
        .add_listener(listener.into_js_value().unchecked_ref());
}

/// Starts the runtime in this page: listens for the worker and announces the page. `runtime`
/// is `"wasm"` or `"js"` (which build `content.js` managed to load).
#[wasm_bindgen]
pub fn start(runtime: &str) {
    let kind = match runtime {
        "js" => RuntimeKind::Js,
        _ => RuntimeKind::Wasm,
    };
    PAGE.with(|p| p.borrow_mut().runtime = Some(kind));
    let listener = Closure::<dyn FnMut(JsValue, JsValue, Function) -> JsValue>::new(on_message);
    on_message_add_listener(listener.as_ref().unchecked_ref());
    listener.forget();
    // In-place navigations: the page's URL (and so its adapters) may change without a reload.
    // history.pushState is invisible from this isolated world; the worker sees it through
    // tabs.onUpdated and pushes the new adapters.
    if let Some(window) = web_sys::window() {
        let reannounce = Closure::<dyn FnMut()>::new(announce).into_js_value();
        for event in ["popstate", "hashchange", "pageshow"] {
            let _ = window.add_event_listener_with_callback(event, reannounce.unchecked_ref());
        }
        if let Some(document) = window.document() {
            listen_for_page_tools(&document);
        }
    }
    announce();
}

// ----- WebMCP: tools the page registers itself --------------------------------------------------

const PAGE_TOOLS_EVENT: &str = "tabwire:webmcp-tools";
const PAGE_RESULT_EVENT: &str = "tabwire:webmcp-result";

fn listen_for_page_tools(document: &web_sys::Document) {
    let on_tools = Closure::<dyn FnMut(JsValue)>::new(|event: JsValue| {
        let Some(detail) = event_detail(&event, webmcp::MAX_DECLARATION_BYTES) else {
            return;
        };
        let declared = serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null);
        let tools = webmcp::page_tools(&declared, &location_and_title().0);
        let changed = PAGE.with(|p| {
            let mut p = p.borrow_mut();
            let changed = *p.page_tools != tools;
            p.page_tools = Rc::new(tools);
            changed
        });
        if changed {
            let adapters = PAGE.with(|p| p.borrow().catalog.adapters().to_vec());
            announce_tools(adapters);
        }
    })
    .into_js_value();
    let _ = document.add_event_listener_with_callback(PAGE_TOOLS_EVENT, on_tools.unchecked_ref());
    // Any answer to a pending call resolves it at once, even one too large or too deeply nested
    // to read (`call_page_tool` says which): the relay writes the call's id first.
    let on_result = Closure::<dyn FnMut(JsValue)>::new(|event: JsValue| {
        let Ok(detail) =
            Reflect::get(&event, &"detail".into()).and_then(|d| d.dyn_into::<js_sys::JsString>())
        else {
            return;
        };
        let head = String::from(detail.slice(0, 256));
        let Some(id) = result_id(&head) else {
            return;
        };
        if let Some(resolve) = PAGE.with(|p| p.borrow_mut().page_calls.remove(id)) {
            let _ = resolve.call1(&JsValue::NULL, &detail);
        }
    })
    .into_js_value();
    let _ = document.add_event_listener_with_callback(PAGE_RESULT_EVENT, on_result.unchecked_ref());
    // The page may have registered tools before this runtime loaded: ask for them again.
    dispatch(document, "tabwire:webmcp-hello", "null");
}

/// The call id a WebMCP result starts with (`{"id":"<id>",...`).
fn result_id(detail: &str) -> Option<&str> {
    detail.strip_prefix(r#"{"id":""#)?.split('"').next()
}

/// A CustomEvent's `detail`, when it is a string of at most `max` bytes.
fn event_detail(event: &JsValue, max: usize) -> Option<String> {
    Reflect::get(event, &"detail".into())
        .ok()?
        .as_string()
        .filter(|d| d.len() <= max)
}

fn dispatch(document: &web_sys::Document, kind: &str, detail: &str) {
    let init = js_sys::Object::new();
    let _ = Reflect::set(&init, &"detail".into(), &detail.into());
    let event = Reflect::get(&js_sys::global(), &"CustomEvent".into())
        .and_then(|ctor| ctor.dyn_into::<Function>())
        .and_then(|ctor| Reflect::construct(&ctor, &js_sys::Array::of2(&kind.into(), &init)));
    if let Ok(event) = event {
        let _ = document.dispatch_event(event.unchecked_ref());
    }
}

/// Relays a call to the page's own tool and waits for its answer, the deadline or a cancel.
async fn call_page_tool(
    id: &str,
    tool: PageTool,
    args: serde_json::Value,
    timeout_ms: u64,
) -> Result<serde_json::Value, WireError> {
    let def = ToolDef {
        name: tool.spec.name.clone(),
        description: String::new(),
        input_schema: tool.spec.input_schema.clone(),
        output_schema: None,
        annotations: tool.spec.annotations,
        steps: Vec::new(),
    };
    let args = check_args(&def, args)?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| WireError::new(ErrorCode::Internal, "this page has no document"))?;
    let key = id.to_owned();
    let answer = Promise::new(&mut |resolve, _reject| {
        let on_timeout = resolve.clone();
        PAGE.with(|p| p.borrow_mut().page_calls.insert(key.clone(), resolve));
        let fire = Closure::once_into_js(move || {
            let _ = on_timeout.call1(&JsValue::NULL, &JsValue::NULL);
        });
        set_timeout(fire.unchecked_ref(), timeout_ms as f64);
    });
    let call = serde_json::json!({"id": id, "name": tool.page_name, "args": args});
    dispatch(&document, "tabwire:webmcp-call", &call.to_string());
    let outcome = JsFuture::from(answer).await;
    PAGE.with(|p| p.borrow_mut().page_calls.remove(id));
    let name = &tool.spec.name;
    let outcome = outcome.unwrap_or(JsValue::NULL);
    if outcome == JsValue::FALSE {
        return Err(WireError::new(
            ErrorCode::Cancelled,
            format!("{name} was cancelled"),
        ));
    }
    let Some(text) = outcome.dyn_ref::<js_sys::JsString>() else {
        return Err(WireError::new(
            ErrorCode::Timeout,
            format!("the page's own tool {name} did not answer within {timeout_ms} ms"),
        ));
    };
    // Measured before copying (a UTF-8 string has at least as many bytes as UTF-16 units): a page
    // may answer with anything.
    let max = bridge::MAX_MESSAGE_BYTES / 2;
    let text = (text.length() as usize <= max)
        .then(|| String::from(text))
        .filter(|text| text.len() <= max);
    let Some(text) = text else {
        return Err(WireError::new(
            ErrorCode::TooLarge,
            format!("the page's own tool {name} answered with more than {max} bytes"),
        ));
    };
    let reply = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(reply) => reply,
        Err(e) if e.to_string().contains("recursion limit") => {
            return Err(WireError::new(
                ErrorCode::TooLarge,
                format!(
                    "the page's own tool {name} answered with JSON nested deeper than 128 levels"
                ),
            ));
        }
        Err(e) => {
            return Err(WireError::new(
                ErrorCode::AdapterError,
                format!("the page's own tool {name} answered with no JSON: {e}"),
            ));
        }
    };
    if reply.get("ok").and_then(serde_json::Value::as_bool) == Some(true) {
        let value = reply
            .get("value")
            .cloned()
            .unwrap_or(serde_json::Value::Null);
        Ok(webmcp::page_result(&location_and_title().0, value))
    } else {
        let why: String = reply
            .get("error")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("no reason given")
            .chars()
            .take(1000)
            .collect();
        Err(WireError::new(
            ErrorCode::AdapterError,
            format!("the page's own tool {name} failed, the page says: {why}"),
        ))
    }
}

fn location_and_title() -> (String, String) {
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

/// Tells the worker this page is ready; its answer carries the adapters for the page's URL.
fn announce() {
    let (url, title) = location_and_title();
    let runtime = PAGE.with(|p| p.borrow().runtime);
    let ready = FromPage::PageReady {
        url,
        title,
        runtime,
    };
    spawn_local(async move {
        match JsFuture::from(runtime_send_message(&encode(&ready))).await {
            Ok(reply) => {
                if let Some(ToPage::Adapters { adapters }) = reply
                    .as_string()
                    .and_then(|t| serde_json::from_str(&t).ok())
                {
                    set_adapters(adapters);
                }
            }
            Err(e) => console_warn(&format!("tabwire: the extension did not answer: {e:?}")),
        }
    });
}

/// Delays between checks of DOM predicates still unmet (the page may render late), in ms.
const PREDICATE_RECHECKS_MS: &[f64] = &[100.0, 200.0, 400.0, 800.0, 1600.0, 3200.0];

fn set_adapters(adapters: Vec<bridge::adapter::Adapter>) {
    let generation = PAGE.with(|p| {
        let mut p = p.borrow_mut();
        p.offered = Rc::new(adapters);
        p.offered_generation = p.offered_generation.wrapping_add(1);
        p.offered_generation
    });
    apply_predicates(generation, 0, true);
}

/// Announces the tools of the offered adapters whose DOM predicate holds (when that set changed
/// or `force`), and schedules a re-check while some predicate is unmet.
fn apply_predicates(generation: u32, attempt: usize, force: bool) {
    let (offered, current) = PAGE.with(|p| {
        let p = p.borrow();
        (p.offered.clone(), p.offered_generation)
    });
    if current != generation {
        return;
    }
    let document = web_sys::window().and_then(|w| w.document());
    let has_element = |selector: &str| {
        document
            .as_ref()
            .is_some_and(|d| d.query_selector(selector).ok().flatten().is_some())
    };
    let (applying, pending) = state::applicable(&offered, has_element);
    let changed = PAGE.with(|p| p.borrow().catalog.adapters() != applying.as_slice());
    if changed || force {
        announce_tools(applying);
    }
    if pending && let Some(delay) = PREDICATE_RECHECKS_MS.get(attempt) {
        let recheck =
            Closure::once_into_js(move || apply_predicates(generation, attempt + 1, false));
        set_timeout(recheck.unchecked_ref(), *delay);
    }
}

fn announce_tools(adapters: Vec<bridge::adapter::Adapter>) {
    let catalog = Catalog::new(adapters);
    let mut tools = catalog.specs();
    PAGE.with(|p| {
        let mut p = p.borrow_mut();
        tools.extend(p.page_tools.iter().map(|t| t.spec.clone()));
        p.catalog = Rc::new(catalog);
    });
    if PAGE.with(|p| state::has_extractor(p.borrow().catalog.adapters())) {
        watch_state();
    }
    let (url, title) = location_and_title();
    let update = FromPage::ToolsUpdated { url, title, tools };
    // The worker answers nothing; a failure (worker restarting) is retried by its refresh.
    let _ = runtime_send_message(&encode(&update));
}

fn encode(msg: &FromPage) -> String {
    serde_json::to_string(msg).expect("page messages serialize")
}

fn on_message(message: JsValue, sender: JsValue, send_response: Function) -> JsValue {
    let our_id = js_sys::Reflect::get(&js_sys::global(), &"chrome".into())
        .and_then(|c| js_sys::Reflect::get(&c, &"runtime".into()))
        .and_then(|r| js_sys::Reflect::get(&r, &"id".into()))
        .ok();
    let from = js_sys::Reflect::get(&sender, &"id".into()).ok();
    if our_id.is_none() || from != our_id {
        return JsValue::FALSE;
    }
    let Some(msg) = message
        .as_string()
        .and_then(|t| serde_json::from_str::<ToPage>(&t).ok())
    else {
        return JsValue::FALSE;
    };
    JsValue::from_bool(handle(msg, Reply::Callback(send_response)))
}

/// Carries out one request of the worker; whether an answer will follow through `reply`.
fn handle(msg: ToPage, reply: Reply) -> bool {
    match msg {
        ToPage::CallTool {
            id,
            tool,
            args,
            timeout_ms,
        } => {
            spawn_local(answer(id, tool, Start::Call(args), timeout_ms, reply));
            true
        }
        ToPage::ContinueTool {
            id,
            tool,
            resume_at,
            vars,
            timeout_ms,
        } => {
            let start = Start::Continue { resume_at, vars };
            spawn_local(answer(id, tool, start, timeout_ms, reply));
            true
        }
        ToPage::Adapters { adapters } => {
            set_adapters(adapters);
            false
        }
        ToPage::Cancel { id } => {
            if let Some(flag) = PAGE.with(|p| p.borrow().running.get(&id).cloned()) {
                flag.set(true);
            }
            if let Some(resolve) = PAGE.with(|p| p.borrow_mut().page_calls.remove(&id)) {
                let _ = resolve.call1(&JsValue::NULL, &JsValue::FALSE);
            }
            false
        }
        ToPage::RequestState { id } => {
            spawn_local(async move {
                let answer = match current_state().await {
                    Ok(state) => FromPage::StateResponse {
                        id: id.clone(),
                        state,
                    },
                    Err(error) => FromPage::StateError {
                        id: id.clone(),
                        error,
                    },
                };
                reply.send(&id, &answer);
            });
            true
        }
    }
}

// ----- code adapters (adapters/code, bundled at build time) -----------------------------------

/// The handler `extension/dist/code-adapters.js` holds for `adapter`'s `tool`, if it is a code tool.
fn code_handler(adapter: &str, tool: &str) -> Option<Function> {
    // Each level is checked before the next lookup: `Reflect.get` on `undefined` throws, and a
    // thrown exception costs the runtime a slot of wasm-bindgen's externref table for good.
    let property = |of: &JsValue, key: &str| {
        Reflect::get(of, &key.into())
            .ok()
            .filter(JsValue::is_object)
    };
    let bundle = property(&js_sys::global(), "__tabwireCodeAdapters")?;
    let tools = property(&property(&bundle, "handlers")?, adapter)?;
    Reflect::get(&tools, &tool.into()).ok()?.dyn_into().ok()
}

/// Runs a code tool's handler under the call's deadline; its result must be JSON.
async fn call_code_tool(
    handler: &Function,
    name: &str,
    args: bridge::template::Vars,
    timeout_ms: u64,
) -> Result<serde_json::Value, WireError> {
    let failed = |e: JsValue| {
        let why = e
            .dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .unwrap_or_else(|| format!("{e:?}"));
        WireError::new(
            ErrorCode::AdapterError,
            format!("{name}: the handler failed: {why}"),
        )
    };
    let args = serde_json::Value::Object(args).to_string();
    let args = js_sys::JSON::parse(&args).map_err(failed)?;
    let returned = handler.call1(&JsValue::NULL, &args).map_err(failed)?;
    let timed_out = js_sys::Object::new();
    let marker = timed_out.clone();
    let deadline = Promise::new(&mut |resolve, _reject| {
        let marker = marker.clone();
        let fire = Closure::once_into_js(move || {
            let _ = resolve.call1(&JsValue::NULL, &marker);
        });
        set_timeout(fire.unchecked_ref(), timeout_ms as f64);
    });
    let race = Promise::race(&js_sys::Array::of2(&Promise::resolve(&returned), &deadline));
    let value = JsFuture::from(race).await.map_err(failed)?;
    if js_sys::Object::is(&value, &timed_out) {
        return Err(WireError::new(
            ErrorCode::Timeout,
            format!("{name}: the handler did not finish within {timeout_ms} ms"),
        ));
    }
    if value.is_undefined() {
        return Ok(serde_json::Value::Null);
    }
    let text = js_sys::JSON::stringify(&value)
        .map_err(failed)?
        .as_string()
        .unwrap_or_default();
    if text.len() > bridge::MAX_MESSAGE_BYTES / 2 {
        return Err(WireError::new(
            ErrorCode::TooLarge,
            format!("{name}: the handler returned {} bytes", text.len()),
        ));
    }
    serde_json::from_str(&text).map_err(|e| {
        WireError::new(
            ErrorCode::AdapterError,
            format!("{name}: the handler returned no JSON: {e}"),
        )
    })
}

async fn current_state() -> Result<serde_json::Value, WireError> {
    let catalog = PAGE.with(|p| p.borrow().catalog.clone());
    let dom = WebDom::new()
        .ok_or_else(|| WireError::new(ErrorCode::Internal, "this page has no document"))?;
    state::extract(&dom, catalog.adapters(), &Cell::new(false)).await
}

/// After a call that may have changed the page: push its state (if an adapter extracts one).
fn push_state() {
    if !PAGE.with(|p| state::has_extractor(p.borrow().catalog.adapters())) {
        return;
    }
    spawn_local(async {
        match current_state().await {
            Ok(state) => send_state(state),
            Err(e) => console_warn(&format!("tabwire: state after the call: {e}")),
        }
    });
}

fn send_state(state: serde_json::Value) {
    let update = FromPage::StateUpdate {
        state: state.clone(),
        ts: js_sys::Date::now() as u64,
    };
    PAGE.with(|p| p.borrow_mut().last_state = Some(state));
    let _ = runtime_send_message(&encode(&update));
}

/// How long the page must have been changing before its state is extracted again: a burst of DOM
/// changes (a framework re-rendering a list) costs one extraction, and pushes stay at most a few a
/// second whatever the page does.
const STATE_SETTLE_MS: f64 = 250.0;

/// Watches the page while an adapter declares a state: a change made by the user or by the page
/// itself (not by a call, which pushes its own) is pushed when the extracted state really changed.
fn watch_state() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if PAGE.with(|p| std::mem::replace(&mut p.borrow_mut().watching_state, true)) {
        return;
    }
    let on_change = Closure::<dyn FnMut()>::new(|| {
        let schedule = PAGE.with(|p| {
            let mut p = p.borrow_mut();
            !std::mem::replace(&mut p.state_check_pending, true)
        });
        if schedule {
            let check = Closure::once_into_js(check_state);
            set_timeout(check.unchecked_ref(), STATE_SETTLE_MS);
        }
    })
    .into_js_value();
    if let Ok(observer) = web_sys::MutationObserver::new(on_change.unchecked_ref()) {
        let options = web_sys::MutationObserverInit::new();
        options.set_subtree(true);
        options.set_child_list(true);
        options.set_attributes(true);
        options.set_character_data(true);
        let _ = observer.observe_with_options(&document, &options);
    }
}

/// Extracts the state after the page changed and pushes it if it differs from the last one pushed.
/// While a call runs, the check waits for it: a changing call pushes its own state when it ends,
/// but a read-only one (opening an item to read it) changes the page without pushing.
fn check_state() {
    let (has_extractor, busy) = PAGE.with(|p| {
        let p = p.borrow();
        (
            state::has_extractor(p.catalog.adapters()),
            !p.running.is_empty(),
        )
    });
    if busy {
        let again = Closure::once_into_js(check_state);
        set_timeout(again.unchecked_ref(), STATE_SETTLE_MS);
        return;
    }
    PAGE.with(|p| p.borrow_mut().state_check_pending = false);
    if !has_extractor {
        return;
    }
    spawn_local(async {
        if let Ok(state) = current_state().await
            && PAGE.with(|p| p.borrow().last_state.as_ref() != Some(&state))
        {
            send_state(state);
        }
    });
}

/// A new call's arguments, or where a call that navigated here goes on.
enum Start {
    Call(serde_json::Value),
    Continue {
        resume_at: usize,
        vars: bridge::template::Vars,
    },
}

/// Runs the call and answers the worker; after a `navigate` step, answers that the call goes on
/// and then loads the new page.
async fn answer(id: String, tool: String, start: Start, timeout_ms: u64, reply_to: Reply) {
    let call_id = id.clone();
    let (reply, navigate_to) = match call(&id, &tool, start, timeout_ms).await {
        Ok(Outcome::Finished(result)) => (FromPage::CallToolResult { id, result }, None),
        Ok(Outcome::Navigate {
            url,
            resume_at,
            vars,
            timeout_ms,
        }) => (
            FromPage::CallToolContinue {
                id,
                tool,
                resume_at,
                vars,
                timeout_ms,
            },
            Some(url),
        ),
        Err(error) => (FromPage::CallToolError { id, error }, None),
    };
    reply_to.send(&call_id, &reply);
    if let Some(url) = navigate_to
        && let Some(window) = web_sys::window()
        && let Err(e) = window.location().set_href(&url)
    {
        console_warn(&format!("tabwire: navigating to {url} failed: {e:?}"));
    }
}

async fn call(id: &str, tool: &str, start: Start, timeout_ms: u64) -> Result<Outcome, WireError> {
    let page_tool = PAGE.with(|p| {
        p.borrow()
            .page_tools
            .iter()
            .find(|t| t.spec.name == tool)
            .cloned()
    });
    if let Some(page_tool) = page_tool {
        let Start::Call(args) = start else {
            return Err(WireError::new(
                ErrorCode::Internal,
                "a page's own tool cannot continue after a navigation",
            ));
        };
        let read_only = page_tool.spec.annotations.read_only;
        let result = call_page_tool(id, page_tool, args, timeout_ms).await;
        if !read_only {
            push_state();
        }
        return result.map(Outcome::Finished);
    }
    let catalog = PAGE.with(|p| p.borrow().catalog.clone());
    let (adapter, tool) = catalog.find_with_adapter(tool)?;
    let (args, resume_at) = match start {
        Start::Call(args) => (check_args(tool, args)?, 0),
        Start::Continue { resume_at, vars } => (vars, resume_at),
    };
    if let Some(handler) = code_handler(adapter, &tool.name) {
        let result = call_code_tool(&handler, &tool.name, args, timeout_ms).await;
        if !tool.annotations.read_only {
            push_state();
        }
        return result.map(Outcome::Finished);
    }
    let dom = WebDom::new()
        .ok_or_else(|| WireError::new(ErrorCode::Internal, "this page has no document"))?;
    let cancelled = Rc::new(Cell::new(false));
    PAGE.with(|p| {
        p.borrow_mut()
            .running
            .insert(id.to_owned(), cancelled.clone())
    });
    let result = run_tool(&dom, tool, args, resume_at, timeout_ms, &cancelled).await;
    PAGE.with(|p| p.borrow_mut().running.remove(id));
    // A failed call may have changed the page halfway, so its state is pushed too; a call that
    // navigates pushes it from the next page, where it finishes.
    if !tool.annotations.read_only && !matches!(result, Ok(Outcome::Navigate { .. })) {
        push_state();
    }
    result
}
