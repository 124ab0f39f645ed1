//! The content script's browser side: [`start`] (called by `extension/content.js` with the build
//! that loaded), the `runtime.onMessage` listener and the page's port to the worker
//! ([`use_port`]), announcing the page's tools to the worker (of the adapters whose DOM
//! predicate the page meets), running calls with their deadline and
//! cancellation, and the page's state: pushed after every call of a tool not annotated
//! `read_only`, and answered on request. Also the isolated-world end of WebMCP capture: the tools
//! the page registers itself (relayed by `extension/webmcp.js` as CustomEvents with JSON string
//! details, untrusted) are announced as `webmcp_<name>` and their calls relayed back to the page.

use bridge::upload::UploadFile;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use bridge::adapter::Adapter;
use bridge::dialog::{self, Asker};
use bridge::page::{FromPage, PageCall, RuntimeKind, ToPage};
use bridge::protocol::TabId;
use bridge::webmcp;
use bridge::{ErrorCode, WireError};
use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};

use super::backends::{self, WebBackends};
use super::basics::{
    console_warn, encode, location_and_title, on_message_add_listener, runtime_send_message,
    set_timeout,
};
use super::dialogs;
use super::dom::WebDom;
use crate::page::warm::{Stage, Warmth};
use crate::state;
use crate::steps::Outcome;
use crate::tools::{self, Catalog, Start};

#[wasm_bindgen]
extern "C" {
    /// `requestIdleCallback(callback, {timeout})`, a content script's global as `setTimeout` is.
    #[wasm_bindgen(catch, js_name = requestIdleCallback)]
    fn request_idle_callback(callback: &Function, options: &JsValue) -> Result<JsValue, JsValue>;
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
    /// The warm-up's call (`page::warm`): its answer is encoded, as a call's is, and dropped;
    /// the warm-up is then over.
    Nobody,
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
            Reply::Nobody => {
                if WARMTH.with(|w| w.borrow_mut().ran_once(call_running())) {
                    // In a task of its own: a call that came meanwhile runs first.
                    let again = Closure::once_into_js(warm_run);
                    set_timeout(again.unchecked_ref(), 0.0);
                } else {
                    warm_over(Stage::Ran);
                }
            }
        }
    }
}

struct Page {
    runtime: Option<RuntimeKind>,
    /// The adapters and code adapters the worker sent for this URL, before their DOM predicates.
    offered: Rc<(Vec<Adapter>, Vec<Adapter>)>,
    /// Bumped whenever `offered` changes: stale predicate re-checks stop.
    offered_generation: u32,
    /// The adapters whose predicates hold, and the tools the page registered itself.
    catalog: Rc<Catalog>,
    /// Cancellation flags of the calls running now.
    running: HashMap<String, Rc<Cell<bool>>>,
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
    super::page::install();
    if crate::page::profile::ON {
        crate::page::profile::set_clock(super::basics::now_ms);
    }
    let listener = Closure::<dyn FnMut(JsValue, JsValue, Function) -> JsValue>::new(on_message);
    on_message_add_listener(listener.as_ref().unchecked_ref());
    listener.forget();
    // In-place navigations: the page's URL (and so its adapters) may change without a reload.
    // history.pushState is invisible from this isolated world; the worker sees it through
    // tabs.onUpdated and pushes the new adapters.
    if let Some(window) = web_sys::window() {
        let reannounce = Closure::<dyn FnMut(JsValue)>::new(|event: JsValue| {
            // A page shown as it loads announced itself as this runtime started (its tools are
            // told again if they changed since: an adapter's element appeared); one restored from
            // the back/forward cache is news to the worker. Announcing each page again as it
            // loads was a round trip to the worker in the way of the model's first call.
            let persisted = js_sys::Reflect::get(&event, &"persisted".into()).ok();
            if persisted.and_then(|p| p.as_bool()) == Some(false) {
                let generation = PAGE.with(|p| p.borrow().offered_generation);
                apply_predicates(generation, PREDICATE_RECHECKS_MS.len(), false);
            } else {
                announce();
            }
        })
        .into_js_value();
        for event in ["popstate", "hashchange", "pageshow"] {
            let _ = window.add_event_listener_with_callback(event, reannounce.unchecked_ref());
        }
        if let Some(document) = window.document() {
            listen_for_page_tools(&document);
        }
    }
    announce();
    if let Some(window) = web_sys::window() {
        warm_when_due(&window);
    }
}

// ----- the snapshot path warmed before the first call (issue 32, `page::warm`) -----------------

/// Once the page has loaded (its own load never waits for this), at the first idle moment; at
/// once on a load Tabwire set off (the worker hurried it: `worker/src/core/hurry.rs`), or where
/// the runtime started before its page had loaded, which `content.js` does only on such a load. A
/// call waits there for the page's announcement: the warm-up then runs while that travels to the
/// worker and back, instead of the call paying for the cold path after it.
fn warm_when_due(window: &web_sys::Window) {
    let loaded = window
        .document()
        .is_some_and(|d| d.ready_state() == "complete");
    let hurried = js_sys::Reflect::get(
        &super::basics::CONTENT_GLOBAL.with(JsValue::clone),
        &"__tabwireHurried".into(),
    )
    .is_ok_and(|h| h.is_truthy());
    if hurried || !loaded {
        // After the announcement's message has gone (its send is the task queued before this).
        spawn_local(async { warm_now() });
        return;
    }
    let options = js_sys::Object::new();
    // Bounded: a page that is never idle still gets it within a second.
    let _ = js_sys::Reflect::set(&options, &"timeout".into(), &1000.into());
    let warm = Closure::once_into_js(warm_now);
    // A browser without it only misses the warm-up.
    let _ = request_idle_callback(warm.unchecked_ref(), &options);
}

thread_local! {
    /// This document's warm-up, and the worker's `open_tab`s waiting for it (their resolvers).
    static WARMTH: RefCell<Warmth<Function>> = RefCell::default();
}

/// Whether a call runs in this page now (the warm-up never runs beside one).
fn call_running() -> bool {
    PAGE.with(|p| !p.borrow().running.is_empty())
}

fn warm_now() {
    if !WARMTH.with(|w| w.borrow_mut().start()) {
        return;
    }
    // A call that started first warms the path itself; the warm-up never runs beside one.
    if call_running() {
        return warm_over(Stage::Skipped);
    }
    let elements = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector_all("*").ok())
        .map_or(u32::MAX, |all| all.length());
    let refs = super::page::REFS.with(Rc::clone);
    if !crate::page::warm::worth_warming(elements, &refs.borrow()) {
        return warm_over(Stage::Skipped);
    }
    warm_run();
}

/// One run of the warm-up's call (again only while no call runs).
fn warm_run() {
    if call_running() {
        return warm_over(Stage::Ran);
    }
    let refs = super::page::REFS.with(Rc::clone);
    let frame = refs.borrow().frame;
    let origin = bridge::origin::text_of(&location_and_title().0);
    // Decoded as the port's listener decodes a call (`use_port`) and handled as one; its answer
    // to nobody ends the warm-up (`Reply::Nobody`).
    let message = crate::page::warm::message(frame, origin.as_deref());
    match serde_json::from_str::<ToPage>(&message) {
        Ok(call) => {
            handle(call, Reply::Nobody);
        }
        Err(_) => warm_over(Stage::Skipped),
    }
}

/// The warm-up is over: whoever waited for it hears so, and the content scripts' world shows
/// it (`__tabwireWarm`, where the end-to-end tests look).
fn warm_over(how: Stage) {
    let waiting = WARMTH.with(|w| w.borrow_mut().over(how));
    let _ = js_sys::Reflect::set(
        &super::basics::CONTENT_GLOBAL.with(JsValue::clone),
        &"__tabwireWarm".into(),
        &how.label().into(),
    );
    for resolve in waiting {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// A promise resolved once this document's warm-up is over, starting it now if it has not
/// started: the worker's `open_tab` asks once the page has loaded, so that a call made at once
/// after `browser_open` finds the path compiled (`worker.js`'s `__tabwireWarmProbe`).
#[wasm_bindgen]
pub fn warm_up() -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve, _reject| {
        if let Some(resolve) = WARMTH.with(|w| w.borrow_mut().wait(resolve)) {
            let _ = resolve.call0(&JsValue::NULL);
            return;
        }
        warm_now();
    })
}

// ----- WebMCP: tools the page registers itself --------------------------------------------------

const PAGE_TOOLS_EVENT: &str = "tabwire:webmcp-tools";

fn listen_for_page_tools(document: &web_sys::Document) {
    let on_tools = Closure::<dyn FnMut(JsValue)>::new(|event: JsValue| {
        let Some(detail) = backends::event_detail(&event, webmcp::MAX_DECLARATION_BYTES) else {
            return;
        };
        let declared = serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null);
        let page_tools = webmcp::page_tools(&declared, &location_and_title().0);
        let catalog = PAGE.with(|p| p.borrow().catalog.clone());
        if catalog.page_tools != page_tools {
            announce_tools(Catalog {
                page_tools,
                ..Catalog::clone(&catalog)
            });
        }
    })
    .into_js_value();
    let _ = document.add_event_listener_with_callback(PAGE_TOOLS_EVENT, on_tools.unchecked_ref());
    backends::listen_for_page_results(document);
    // The page may have registered tools before this runtime loaded: ask for them again.
    super::basics::dispatch(document, "tabwire:webmcp-hello", "null");
}

/// Whether this document's page has told the worker its tools, once: the worker's `open_tab`s
/// wait for it (`worker.js`'s `__tabwireWarmProbe`), so the server knows the page (its URL, for
/// the model's first call) before `browser_open` answers.
enum Told {
    Not { waiting: Vec<Function> },
    Yes,
}

thread_local! {
    static TOLD: RefCell<Told> = const { RefCell::new(Told::Not { waiting: Vec::new() }) };
}

/// A promise resolved once the page's first announcement was answered and its tools told (or the
/// worker did not answer it).
#[wasm_bindgen]
pub fn announced() -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve, _reject| {
        TOLD.with(|told| match &mut *told.borrow_mut() {
            Told::Not { waiting } => waiting.push(resolve),
            Told::Yes => {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
    })
}

fn told() {
    if let Told::Not { waiting } = TOLD.with(|told| told.replace(Told::Yes)) {
        for resolve in waiting {
            let _ = resolve.call0(&JsValue::NULL);
        }
    }
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
                if let Some(ToPage::Adapters {
                    adapters,
                    code_adapters,
                }) = reply
                    .as_string()
                    .and_then(|t| serde_json::from_str(&t).ok())
                {
                    set_adapters(adapters, code_adapters);
                }
            }
            Err(e) => console_warn(&format!("tabwire: the extension did not answer: {e:?}")),
        }
        told();
    });
}

/// Delays between checks of DOM predicates still unmet (the page may render late), in ms.
const PREDICATE_RECHECKS_MS: &[f64] = &[100.0, 200.0, 400.0, 800.0, 1600.0, 3200.0];

fn set_adapters(adapters: Vec<serde_json::Value>, code: Vec<serde_json::Value>) {
    let (adapters, code, problems) = tools::unpack(adapters, code);
    for problem in problems {
        console_warn(&format!("tabwire: left out {problem}"));
    }
    let generation = PAGE.with(|p| {
        let mut p = p.borrow_mut();
        p.offered = Rc::new((adapters, code));
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
    let (adapters, adapters_pending) = state::applicable(&offered.0, has_element);
    let (code, code_pending) = state::applicable(&offered.1, has_element);
    let pending = adapters_pending || code_pending;
    let catalog = PAGE.with(|p| p.borrow().catalog.clone());
    if force || catalog.adapters != adapters || catalog.code != code {
        announce_tools(Catalog {
            adapters,
            code,
            page_tools: catalog.page_tools.clone(),
        });
    }
    if pending && let Some(delay) = PREDICATE_RECHECKS_MS.get(attempt) {
        let recheck =
            Closure::once_into_js(move || apply_predicates(generation, attempt + 1, false));
        set_timeout(recheck.unchecked_ref(), *delay);
    }
}

/// Makes `catalog` the page's and tells the worker its tools.
fn announce_tools(catalog: Catalog) {
    let tools = catalog.offered();
    let watch = state::has_extractor(&catalog.adapters);
    PAGE.with(|p| p.borrow_mut().catalog = Rc::new(catalog));
    if watch {
        watch_state();
    }
    let (url, title) = location_and_title();
    let update = FromPage::ToolsUpdated { url, title, tools };
    // The worker answers nothing; a failure (worker restarting) is retried by its refresh.
    let _ = runtime_send_message(&encode(&update));
}

fn on_message(message: JsValue, sender: JsValue, send_response: Function) -> JsValue {
    let our_id = super::basics::RUNTIME_ID.with(JsValue::clone);
    let from = js_sys::Reflect::get(&sender, &"id".into()).ok();
    if !our_id.is_string() || from.as_ref() != Some(&our_id) {
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
            trusted_input,
            files,
        } => {
            let start = Start::Call(args);
            let carried = Carried::new(trusted_input, files);
            spawn_local(answer(id, tool, start, timeout_ms, carried, reply));
            true
        }
        ToPage::ContinueTool {
            id,
            tool,
            resume_at,
            vars,
            timeout_ms,
            trusted_input,
            files,
        } => {
            let start = Start::Continue { resume_at, vars };
            let carried = Carried::new(trusted_input, files);
            spawn_local(answer(id, tool, start, timeout_ms, carried, reply));
            true
        }
        ToPage::PageOp { id, tab, call } => {
            // Chrome's id of this frame, said by the worker that sent it here: refs carry it.
            super::page::REFS.with(|refs| refs.borrow_mut().frame = call.frame);
            spawn_local(page_op(id, tab, call, reply));
            true
        }
        ToPage::Adapters {
            adapters,
            code_adapters,
        } => {
            set_adapters(adapters, code_adapters);
            false
        }
        ToPage::Record { recording } => {
            super::record::set(recording);
            false
        }
        ToPage::FrameDialog { report, origin } => {
            dialogs::seen_in_frame(&report, origin);
            false
        }
        ToPage::Cancel { id } => {
            if let Some(flag) = PAGE.with(|p| p.borrow().running.get(&id).cloned()) {
                flag.set(true);
            }
            backends::cancel_page_call(&id);
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

async fn current_state() -> Result<serde_json::Value, WireError> {
    let catalog = PAGE.with(|p| p.borrow().catalog.clone());
    let dom = WebDom::new()
        .ok_or_else(|| WireError::new(ErrorCode::Internal, "this page has no document"))?;
    state::extract(&dom, &catalog.adapters, &Cell::new(false)).await
}

/// After a call that may have changed the page: push its state (if an adapter extracts one).
fn push_state() {
    if !PAGE.with(|p| state::has_extractor(&p.borrow().catalog.adapters)) {
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
    super::dom::observe_all(&document, on_change.unchecked_ref());
}

/// Extracts the state after the page changed and pushes it if it differs from the last one pushed.
/// While a call runs, the check waits for it: a changing call pushes its own state when it ends,
/// but a read-only one (opening an item to read it) changes the page without pushing.
fn check_state() {
    let (has_extractor, busy) = PAGE.with(|p| {
        let p = p.borrow();
        (
            state::has_extractor(&p.catalog.adapters),
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

/// Runs the call and answers the worker; after a `navigate` step, answers that the call goes on
/// and then loads the new page (after an action that set one loading, the page is on its way).
async fn answer(
    id: String,
    tool: String,
    start: Start,
    timeout_ms: u64,
    carried: Carried,
    reply_to: Reply,
) {
    let call_id = id.clone();
    let (reply, navigate_to) = match call(&id, &tool, start, timeout_ms, carried).await {
        Ok(Outcome::Finished(result)) => (FromPage::CallToolResult { id, result }, None),
        Ok(Outcome::Landing {
            value,
            step,
            url,
            timeout_ms,
        }) => (
            FromPage::CallToolLanding {
                id,
                result: value,
                step,
                url,
                timeout_ms,
            },
            None,
        ),
        Ok(Outcome::Navigate {
            url,
            resume_at,
            vars,
            timeout_ms,
            step,
        }) => (
            FromPage::CallToolContinue {
                id,
                tool,
                resume_at,
                vars,
                timeout_ms,
                step,
                acted: url.is_none(),
            },
            url,
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

/// What a tool call brings besides its arguments.
struct Carried {
    /// Its input goes through Chrome's debugger (the origin's trusted-input grant).
    trusted_input: bool,
    /// The files its `upload` steps put on the page.
    files: Rc<[UploadFile]>,
}

impl Carried {
    fn new(trusted_input: bool, files: Vec<UploadFile>) -> Carried {
        Carried {
            trusted_input,
            files: files.into(),
        }
    }
}

/// Runs call `id` on the tool's back-end, cancellable while it runs.
async fn call(
    id: &str,
    tool: &str,
    start: Start,
    timeout_ms: u64,
    carried: Carried,
) -> Result<Outcome, WireError> {
    let catalog = PAGE.with(|p| p.borrow().catalog.clone());
    let cancelled = Rc::new(Cell::new(false));
    PAGE.with(|p| {
        p.borrow_mut()
            .running
            .insert(id.to_owned(), cancelled.clone())
    });
    let backends = WebBackends {
        on_state_change: push_state,
        trusted_call: carried.trusted_input.then(|| id.to_owned()),
        files: carried.files,
    };
    dialogs::begin(id, cancelled.clone());
    let result = tools::call(&catalog, &backends, id, tool, start, timeout_ms, &cancelled).await;
    let seen = dialogs::end(id);
    PAGE.with(|p| p.borrow_mut().running.remove(id));
    match result {
        Ok(Outcome::Finished(value)) => {
            dialog::settle(seen, Ok(value), Asker::AdapterTool).map(Outcome::Finished)
        }
        Err(error) => dialog::settle(seen, Err(error), Asker::AdapterTool).map(Outcome::Finished),
        // The call goes on in the next page: it fails only on a dialog it did not answer.
        Ok(going_on) => {
            dialog::settle(seen, Ok(serde_json::Value::Null), Asker::AdapterTool).map(|_| going_on)
        }
    }
}

/// Runs a page tool's call ([`crate::page`]) and answers it like a tool call; cancellable.
/// `tab`: where the worker sent it, said again in the answer.
async fn page_op(id: String, tab: TabId, call: PageCall, reply_to: Reply) {
    let PageCall {
        op,
        frame: _, // the refs' frame, set as the message arrived
        doc,
        origin,
        timeout_ms,
        trusted_input,
        files,
    } = call;
    let cancelled = Rc::new(Cell::new(false));
    PAGE.with(|p| p.borrow_mut().running.insert(id.clone(), cancelled.clone()));
    let deadline = js_sys::Date::now() + timeout_ms as f64;
    // The warm-up is no call: the page's dialogs are answered as they are when none runs.
    let watched = !matches!(reply_to, Reply::Nobody);
    if watched {
        dialogs::begin(&id, cancelled.clone());
    } else {
        dialogs::warm();
    }
    let result = async {
        if let Some(allowed) = &origin {
            let (url, _) = location_and_title();
            let not_done = "the page tool did not act";
            bridge::browser_ops::still_shows(tab, allowed, &url, not_done)?;
        }
        // The server read the client's arguments; what it read arrives typed.
        let op = op.decode().map_err(|why| {
            WireError::new(ErrorCode::Protocol, format!("the page operation: {why}"))
        })?;
        if let Some(answer) = op.dialog_answer() {
            dialogs::plan(answer);
        }
        let dom = WebDom::new()
            .ok_or_else(|| WireError::new(ErrorCode::Internal, "this page has no document"))?
            .with_trusted_input(trusted_input.then(|| id.clone()))
            .with_files(files.into());
        let refs = super::page::REFS.with(Rc::clone);
        crate::page::run(&dom, &refs, op, doc.as_deref(), timeout_ms, &cancelled).await
    }
    .await;
    let seen = if watched {
        dialogs::end(&id)
    } else {
        Vec::new()
    };
    let result = dialog::settle(seen, result, Asker::PageTool);
    PAGE.with(|p| p.borrow_mut().running.remove(&id));
    let answer = match result {
        Ok(mut result) => {
            result["tab"] = tab.into();
            // An act that set another page loading: the worker answers once that page committed.
            match result
                .get("leaving")
                .and_then(|to| to.as_str())
                .map(str::to_owned)
            {
                Some(url) => FromPage::CallToolLanding {
                    id: id.clone(),
                    result,
                    step: "page_act".to_owned(),
                    url,
                    timeout_ms: (deadline - js_sys::Date::now()).max(0.0) as u64,
                },
                None => FromPage::CallToolResult {
                    id: id.clone(),
                    result,
                },
            }
        }
        Err(error) => FromPage::CallToolError {
            id: id.clone(),
            error,
        },
    };
    reply_to.send(&id, &answer);
}
