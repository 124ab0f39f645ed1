//! The browser side of the service worker: the exports `worker.js` calls, the WebSocket (and the
//! HTTP probe before it), the pages' ports, timers, storage and the execution of [`Action`]s.
//! Decisions are [`Core`]'s; this file only carries them out. Its calls to tabs (a message to a
//! page, a page tool's call, opening a tab) are in `glue/tab_calls.rs`.

use std::cell::{Cell, RefCell};

use bridge::handshake::{self, Nonce};
use bridge::page::{PageCall, ToPage};
use bridge::protocol::{LoadedPage, TabId};
use bridge::{ErrorCode, WireError};
use js_sys::Array;
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{CloseEvent, MessageEvent, WebSocket};

use super::chrome::{self, Port, error_text, from_json, get};
use super::debugger;
use super::state::{LOADER, log, sleep, with_core};
use crate::core::{Action, Core, LinkState, NavEvent, OnReply, PROOF_TIMEOUT_MS, Timer};
use crate::link_problem::{Probe, Problem};
use crate::page_life::{self, AfterLoad, GoneProbe, Next};
use crate::pairing::{Pairing, PairingError, parse_pairing};
use crate::port_waits::{PortWaits, WaitEnd};
use crate::ports::{PortRouter, PortSerial};
use crate::tabs::{self, Sender};

mod tab_calls;

use tab_calls::{on_tab_reply, open_tab, page_op, to_tab};

/// The dynamic content script's id and file.
const SCRIPT_ID: &str = "tabwire-injector";
/// When the dynamic content script runs: as the document starts, so that on a load Tabwire set
/// off (`core/hurry.rs`) `content.js` fetches and compiles the runtime's wasm (off the main thread)
/// while the page parses; on a person's load it waits for the page's load event. It instantiates
/// and starts the runtime only once the document is parsed. Measured (issue 32, BENCHMARKS.md):
/// running the whole runtime from `document_start` delayed the page's DOMContentLoaded about
/// twofold on a loaded 2-core machine; compiling alone, by a fifth on a quiet one.
const PRELOAD_RUN_AT: &str = "document_start";
/// Keep-alive period: MV3 ends a worker after 30 s without events or API calls.
const KEEPALIVE_MS: f64 = 20_000.0;
/// The alarm that wakes a worker Chrome stopped anyway (30 s is the shortest period allowed).
const WAKE_ALARM: &str = "tabwire-wake";

thread_local! {
    static LINK: RefCell<Link> = RefCell::new(Link::default());
    static IDENTITY: RefCell<(String, String)> = const { RefCell::new((String::new(), String::new())) };
    static SCRIPTS: RefCell<ScriptSync> = const { RefCell::new(ScriptSync { wanted: None, running: false }) };
    static FRAME0: JsValue = from_json(r#"{"frameId":0}"#);
    static PING_NONCE: Cell<u64> = const { Cell::new(0) };
    /// Each page's long-lived port, by tab: calls go to the page over it (one message each way
    /// instead of `tabs.sendMessage`'s channel set-up and teardown per call).
    static PORTS: RefCell<PortRouter<Port>> = RefCell::new(PortRouter::default());
    /// Calls waiting for a starting runtime's port, woken by its `runtime.onConnect`.
    static PORT_WAITS: RefCell<PortWaits<js_sys::Function>> = RefCell::new(PortWaits::default());
    /// When this worker last opened a WebSocket (`Date.now()`).
    static LAST_SOCKET_MS: Cell<Option<f64>> = const { Cell::new(None) };
}

/// The probe's request; each gets its own abort signal (see [`PROBE_TIMEOUT_MS`]).
const PROBE_INIT: &str = r#"{"method":"HEAD","cache":"no-store","credentials":"omit"}"#;
/// How long a probe may go unanswered: a program that accepts on the port and never answers must
/// not keep the worker "connecting" (ignoring wakes and alarms) for good.
const PROBE_TIMEOUT_MS: f64 = 1000.0;
/// What tabwire answers a probe with; any other answer is some other program on the port.
const PROBE_STATUS: f64 = 204.0;

/// What a request sent over a port that closed fails with (what `channel_closed` recognizes).
const PORT_CLOSED: &str = "the page's message channel closed before a response was received";

#[derive(Default)]
struct Link {
    socket: Option<WebSocket>,
    /// What the current attempt's probe got (says why a socket that never opened failed).
    probe: Probe,
    /// Reading the pairing config before opening a socket.
    connecting: bool,
    retry_scheduled: bool,
    /// The socket's handlers, made once and shared by every socket.
    handlers: Option<[JsValue; 3]>,
}

struct ScriptSync {
    wanted: Option<Vec<String>>,
    running: bool,
}

/// Restores what a previous worker left, then connects. Resolves before the connection is up.
#[wasm_bindgen]
pub async fn start() {
    let extension_version = get(&chrome::runtime_get_manifest(), "version")
        .as_string()
        .unwrap_or_default();
    let instance_id = instance_id().await;
    IDENTITY.with(|id| *id.borrow_mut() = (extension_version, instance_id));

    let stored = JsFuture::from(chrome::session_get(&from_json(
        r#"["tabs","adapters","recordings","grants"]"#,
    )))
    .await
    .ok();
    let live = open_tabs().await;
    let field = |key: &str| {
        stored
            .as_ref()
            .map(|s| get(s, key))
            .filter(|v| !v.is_undefined())
            .and_then(|v| chrome::to_json(&v))
    };
    let (tabs, adapters) = (field("tabs"), field("adapters"));
    with_core(|core| core.restore(tabs.as_deref(), adapters.as_deref(), &live));
    if let Some(recordings) = field("recordings") {
        with_core(|core| core.restore_recordings(&recordings));
    }
    if let Some(grants) = field("grants") {
        with_core(|core| core.restore_grants(&grants));
    }
    run(with_core(|core| {
        core.set_code_adapters(&code_adapter_declarations())
    }));

    let _ = chrome::alarms_create(WAKE_ALARM, &from_json(r#"{"periodInMinutes":0.5}"#));
    let keepalive = Closure::<dyn FnMut()>::new(keepalive_tick).into_js_value();
    chrome::set_interval(keepalive.unchecked_ref(), KEEPALIVE_MS);
    persist_status();
    super::downloads::restore().await;
    spawn_local(connect());
}

/// The declarations `extension/dist/code-adapters.js` (imported by `worker.js`) collected.
fn code_adapter_declarations() -> Vec<String> {
    let bundle = get(&js_sys::global(), "__tabwireCodeAdapters");
    let declarations = get(&bundle, "declarations");
    if !Array::is_array(&declarations) {
        return Vec::new();
    }
    Array::from(&declarations)
        .iter()
        .filter_map(|d| d.as_string())
        .collect()
}

/// One Chrome event, forwarded by `worker.js`. For `message`, returns the response to give.
#[wasm_bindgen]
pub fn on_event(name: &str, args: Array) -> JsValue {
    let arg = |i: u32| args.get(i);
    let tab = |i: u32| arg(i).as_f64().map(|t| t as TabId);
    match name {
        "message" => {
            let sender = read_sender(&arg(1));
            let our_id = with_core(|core| core.extension_id().to_owned());
            if crate::popup::is_persons_page(&sender, &our_id, &chrome::runtime_get_url("")) {
                spawn_local(super::popup::request(
                    arg(0).as_string(),
                    arg(2).unchecked_into(),
                    run,
                ));
                return JsValue::TRUE; // answered through `respond`
            }
            let text = arg(0).as_string();
            if let Some(report) = with_core(|core| core.frame_dialog(&sender, text.as_deref())) {
                run(vec![report]);
                return JsValue::FALSE;
            }
            if let Some(request) = with_core(|core| core.frame_request(&sender, text.as_deref())) {
                return wasm_bindgen_futures::future_to_promise(async move {
                    Ok(super::frames::snapshot_of(request).await)
                })
                .into();
            }
            // A frame's document is not the tab's: only the top frame's says which port is current.
            if let (Some(tab), Some(0)) = (sender.tab, sender.frame_id) {
                let document = get(&arg(1), "documentId").as_string();
                let lifecycle = get(&arg(1), "documentLifecycle").as_string();
                PORTS.with(|p| {
                    p.borrow_mut()
                        .message_from(tab, document.as_deref(), lifecycle.as_deref())
                });
            }
            let (reply, mut actions) =
                with_core(|core| core.on_page_message(&sender, text.as_deref()));
            // Trusted input is answered once the debugger has performed it.
            let trusted = actions
                .iter()
                .position(|a| matches!(a, Action::TrustedInput { .. }))
                .map(|at| actions.remove(at));
            run(actions);
            if let Some(Action::TrustedInput { tab, commands }) = trusted {
                let done = async move { Ok(JsValue::from(debugger::perform(tab, commands).await)) };
                return wasm_bindgen_futures::future_to_promise(done).into();
            }
            return reply.map(JsValue::from).unwrap_or(JsValue::UNDEFINED);
        }
        "tab_removed" => {
            if let Some(tab) = tab(0) {
                PORTS.with(|p| p.borrow_mut().tab_removed(tab));
                let waits = PORT_WAITS.with(|w| w.borrow_mut().tab_removed(tab));
                end_waits(waits, WaitEnd::GaveUp);
                debugger::tab_removed(tab);
                super::downloads::tab_removed(tab);
                run(with_core(|core| core.on_tab_removed(tab)));
            }
        }
        "tab_updated" => {
            if let Some(tab) = tab(0) {
                let (url, title) = (arg(1).as_string(), arg(2).as_string());
                run(with_core(|core| {
                    core.on_tab_updated(tab, url.as_deref(), title.as_deref())
                }));
            }
        }
        "load_looked" => {
            // [tabId, load, complete] (worker.js's __tabwireLookAtLoad, for Action::LookAtLoad).
            if let (Some(tab), Some(load)) = (tab(0), arg(1).as_f64()) {
                let complete = arg(2).as_bool().unwrap_or(false);
                run(with_core(|core| {
                    core.on_load_looked(tab, load as u64, complete)
                }));
            }
        }
        "tab_activated" => {
            if let Some(tab) = tab(0) {
                run(with_core(|core| core.on_tab_activated(tab)));
            }
        }
        "navigation" => {
            // [kind, tabId, frameId, url, error, frameType, documentLifecycle, timeStamp,
            // documentId] (worker.js).
            let text = |i: u32| arg(i).as_string();
            let event = page_life::nav_event(page_life::RawNav {
                kind: text(0).unwrap_or_default(),
                frame_id: arg(2).as_f64(),
                frame_type: text(5),
                lifecycle: text(6),
                url: text(3).unwrap_or_default(),
                error: text(4).unwrap_or_default(),
                at_ms: arg(7).as_f64(),
                document: text(8),
            });
            if let (Some(tab), Some(event)) = (tab(1), event) {
                if let NavEvent::Committed {
                    document: Some(document),
                    ..
                } = &event
                {
                    PORTS.with(|p| p.borrow_mut().document_shown(tab, document));
                }
                run(with_core(|core| core.on_navigation(tab, event)));
            }
        }
        "download_created" => {
            if let Some(id) = arg(0).as_f64() {
                super::downloads::created(id as u64, arg(1).as_string().unwrap_or_default());
            }
        }
        "debugger_detached" => {
            if let Some(tab) = tab(0) {
                debugger::detached(tab, arg(1).as_string().unwrap_or_default());
            }
        }
        "alarm" | "wake" => wake(),
        "port" => {
            wake();
            adopt_port(arg(0).unchecked_into());
        }
        other => log(&format!("unknown event {other:?} from worker.js")),
    }
    JsValue::UNDEFINED
}

fn read_sender(sender: &JsValue) -> Sender {
    let tab = get(sender, "tab");
    let url = get(sender, "url")
        .as_string()
        .or_else(|| get(&tab, "url").as_string())
        .unwrap_or_default();
    Sender {
        extension_id: get(sender, "id").as_string(),
        tab: get(&tab, "id").as_f64().map(|t| t as TabId),
        frame_id: get(sender, "frameId").as_f64().map(|f| f as i64),
        url,
    }
}

/// A page's runtime connected (`tabwire-wake`): from now on its tab's calls go over this port.
fn adopt_port(port: Port) {
    let sender_js = port.sender();
    let sender = read_sender(&sender_js);
    let our_id = chrome::global_path(&["chrome", "runtime", "id"])
        .as_string()
        .unwrap_or_default();
    let tab = match tabs::check_sender(&sender, &our_id) {
        Ok(tab) => tab,
        Err(why) => return log(&format!("ignored a port {why}")),
    };
    let document = get(&sender_js, "documentId").as_string();
    let serial = PORTS.with(|p| p.borrow_mut().adopt(tab, document, port.clone()));
    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |message: JsValue| {
        on_port_message(tab, serial, &message)
    });
    port.on_message()
        .add_listener(on_message.into_js_value().unchecked_ref());
    let on_disconnect = Closure::<dyn FnMut()>::new(move || on_port_closed(serial));
    port.on_disconnect()
        .add_listener(on_disconnect.into_js_value().unchecked_ref());
    let waits = PORT_WAITS.with(|w| w.borrow_mut().connected(tab));
    end_waits(waits, WaitEnd::Connected);
}

/// Ends waits for a port: each waiting call goes on, posting on the new port or giving up.
fn end_waits(waits: Vec<js_sys::Function>, end: WaitEnd) {
    for wake in waits {
        let _ = wake.call1(&JsValue::NULL, &JsValue::from_bool(end.flag()));
    }
}

/// Waits at most `ms` for a port of `tab` to connect (or the tab to close).
async fn port_connected(tab: TabId, ms: f64) -> WaitEnd {
    let mut id = None;
    let woken = js_sys::Promise::new(&mut |resolve, _| {
        // Resolved with no value at the deadline, which reads as giving up.
        chrome::set_timeout(&resolve, ms);
        id = Some(PORT_WAITS.with(|w| w.borrow_mut().wait(tab, resolve)));
    });
    let connected = JsFuture::from(woken).await.ok().and_then(|v| v.as_bool());
    if let Some(id) = id {
        PORT_WAITS.with(|w| w.borrow_mut().give_up(id));
    }
    WaitEnd::from_flag(connected == Some(true))
}

/// A page's answer `[id, text]` on its port.
fn on_port_message(tab: TabId, serial: PortSerial, message: &JsValue) {
    let Some(answer) = message.dyn_ref::<Array>() else {
        return log(&format!("ignored a malformed answer from tab {tab}"));
    };
    let id = answer.get(0).as_string().unwrap_or_default();
    match PORTS.with(|p| p.borrow_mut().answered(&id, tab, serial)) {
        Some(on_reply) => spawn_local(on_tab_reply(tab, Ok(answer.get(1)), on_reply)),
        None => log(&format!(
            "tab {tab} answered {id:?}, which it was not asked"
        )),
    }
}

fn on_port_closed(serial: PortSerial) {
    let owed = PORTS.with(|p| p.borrow_mut().closed(serial));
    fail_owed(owed);
}

/// Requests a closed port owed: their page went away.
fn fail_owed(owed: Vec<(TabId, OnReply)>) {
    for (tab, on_reply) in owed {
        spawn_local(on_tab_reply(
            tab,
            Err(JsValue::from_str(PORT_CLOSED)),
            on_reply,
        ));
    }
}

/// Sends `message` to `tab` over its page's port; `false` when it goes by `tabs.sendMessage`
/// instead (no port, a runtime to inject, or posting failed).
fn post_to_page(tab: TabId, message: &str, on_reply: &OnReply) -> bool {
    let Some((serial, port)) = PORTS.with(|p| p.borrow_mut().route(tab, on_reply)) else {
        return false;
    };
    if port.post_message(message).is_ok() {
        return true;
    }
    let owed = PORTS.with(|p| p.borrow_mut().post_failed(serial, on_reply));
    fail_owed(owed);
    false
}

// ---- the connection --------------------------------------------------------------------------

/// Connect now if no socket is open or opening (an alarm, a page message or the keep-alive).
fn wake() {
    let idle = LINK.with(|l| {
        let l = l.borrow();
        l.socket.is_none() && !l.connecting
    });
    if idle {
        spawn_local(connect());
    }
}

async fn connect() {
    let busy = LINK.with(|l| {
        let mut l = l.borrow_mut();
        let busy = l.socket.is_some() || l.connecting;
        l.connecting |= !busy;
        busy
    });
    if busy {
        return;
    }
    let pairing = read_pairing().await;
    let pairing = match pairing {
        Ok(p) => p,
        Err(e) => {
            LINK.with(|l| l.borrow_mut().connecting = false);
            let problem = Problem::NotPaired {
                detail: e.to_string(),
            };
            let delay = with_core(|core| core.socket_closed(problem, js_sys::Math::random()));
            persist_status();
            return schedule_connect(delay);
        }
    };
    let nonce = fresh_nonce();
    with_core(|core| core.connecting(&pairing, nonce));
    let probe = format!("http://127.0.0.1:{}/", pairing.port);
    let init = from_json(PROBE_INIT);
    let _ = js_sys::Reflect::set(
        &init,
        &JsValue::from_str("signal"),
        &chrome::abort_after(PROBE_TIMEOUT_MS),
    );
    let probe = match JsFuture::from(chrome::fetch_with(&probe, &init)).await {
        Ok(response) if get(&response, "status").as_f64() == Some(PROBE_STATUS) => Probe::Tabwire,
        Ok(_) => Probe::OtherAnswer,
        Err(_) => Probe::NoAnswer,
    };
    LINK.with(|l| {
        let mut l = l.borrow_mut();
        l.connecting = false;
        l.probe = probe;
    });
    let now = js_sys::Date::now();
    if !crate::backoff::open_socket(probe == Probe::Tabwire, now, LAST_SOCKET_MS.get()) {
        let problem = Problem::of_attempt(probe, false, 0);
        let delay = with_core(|core| core.socket_closed(problem, js_sys::Math::random()));
        persist_status();
        return schedule_connect(delay);
    }
    LAST_SOCKET_MS.set(Some(now));
    let protocols: Array = Pairing::protocols(&nonce)
        .iter()
        .map(|p| JsValue::from_str(p))
        .collect();
    match WebSocket::new_with_str_sequence(&pairing.url(), &protocols) {
        Ok(socket) => LINK.with(|l| {
            let mut l = l.borrow_mut();
            let [open, message, close] = l.handlers.get_or_insert_with(socket_handlers).clone();
            socket.set_onopen(Some(open.unchecked_ref()));
            socket.set_onmessage(Some(message.unchecked_ref()));
            socket.set_onclose(Some(close.unchecked_ref()));
            l.socket = Some(socket);
        }),
        Err(e) => {
            let problem = Problem::SocketError {
                detail: error_text(&e),
            };
            let delay = with_core(|core| core.socket_closed(problem, js_sys::Math::random()));
            persist_status();
            schedule_connect(delay);
        }
    }
}

fn schedule_connect(delay_ms: u32) {
    let already = LINK.with(|l| std::mem::replace(&mut l.borrow_mut().retry_scheduled, true));
    if already {
        return;
    }
    let retry = Closure::once_into_js(|| {
        LINK.with(|l| l.borrow_mut().retry_scheduled = false);
        spawn_local(connect());
    });
    chrome::set_timeout(retry.unchecked_ref(), f64::from(delay_ms));
}

/// Whether `event` comes from the current socket (late events of a replaced one are ignored).
fn from_current_socket(event: &web_sys::Event) -> Option<WebSocket> {
    let target = event.target()?;
    LINK.with(|l| l.borrow().socket.clone())
        .filter(|s| JsValue::from(s) == JsValue::from(target))
}

fn socket_handlers() -> [JsValue; 3] {
    let open = Closure::<dyn FnMut(web_sys::Event)>::new(|event: web_sys::Event| {
        let Some(socket) = from_current_socket(&event) else {
            return;
        };
        let (version, instance) = IDENTITY.with(|id| id.borrow().clone());
        let user_agent = chrome::global_path(&["navigator", "userAgent"])
            .as_string()
            .unwrap_or_default();
        with_core(|core| {
            core.socket_opened(
                &version,
                &instance,
                crate::user_agent::browser_info(&user_agent),
            )
        });
        // A listener that never proves itself must not hold the worker in `proving`.
        let give_up = Closure::once_into_js(move || {
            let same = LINK.with(|l| l.borrow().socket.as_ref() == Some(&socket));
            if same {
                run(with_core(Core::proof_timed_out));
                persist_status();
            }
        });
        chrome::set_timeout(give_up.unchecked_ref(), f64::from(PROOF_TIMEOUT_MS));
        persist_status();
    });
    let message = Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| {
        if let Some(text) = event.data().as_string() {
            run(with_core(|core| core.on_server_frame(&text)));
        }
    });
    let close = Closure::<dyn FnMut(CloseEvent)>::new(|event: CloseEvent| {
        if from_current_socket(&event).is_none() {
            return;
        }
        let probe = LINK.with(|l| {
            let mut l = l.borrow_mut();
            l.socket = None;
            l.probe
        });
        let opened = with_core(|core| core.link() != LinkState::Disconnected);
        let problem = Problem::of_attempt(probe, opened, event.code());
        let delay = with_core(|core| core.socket_closed(problem, js_sys::Math::random()));
        persist_status();
        schedule_connect(delay);
    });
    [
        open.into_js_value(),
        message.into_js_value(),
        close.into_js_value(),
    ]
}

fn send_frame(frame: &str) {
    let socket = LINK.with(|l| l.borrow().socket.clone());
    match socket {
        Some(socket) if socket.ready_state() == WebSocket::OPEN => {
            if let Err(e) = socket.send_with_str(frame) {
                log(&format!("send failed: {}", error_text(&e)));
            }
        }
        _ => {
            log("the link went down before a frame could be sent; the server times the request out")
        }
    }
}

fn keepalive_tick() {
    let nonce = PING_NONCE.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    match with_core(|core| core.ping(nonce)) {
        Some(ping) => {
            send_frame(&ping);
            super::engine::engine().keep_alive();
        }
        None => {
            // Any extension API call resets the idle timer; this one is cheap.
            let _ = chrome::runtime_get_platform_info();
            wake();
        }
    }
}

async fn read_pairing() -> Result<Pairing, PairingError> {
    if let Ok(stored) = JsFuture::from(chrome::local_get(&JsValue::from_str("pairing"))).await {
        let pairing = get(&stored, "pairing");
        if pairing.is_object() {
            return parse_pairing(&chrome::to_json(&pairing).unwrap_or_default());
        }
    }
    let url = chrome::runtime_get_url("extension/pairing.json");
    let text = async {
        let response = JsFuture::from(chrome::fetch(&url)).await?;
        if !get(&response, "ok").as_bool().unwrap_or(false) {
            return Err(JsValue::from_str("extension/pairing.json is missing"));
        }
        JsFuture::from(chrome::call_method(&response, "text", &[])?.dyn_into::<js_sys::Promise>()?)
            .await
    }
    .await
    .map_err(|e| PairingError::Missing(error_text(&e)))?;
    parse_pairing(&text.as_string().unwrap_or_default())
}

/// Makes the handshake's two proofs with the browser's `crypto.subtle` (HMAC-SHA256 under the
/// pairing secret; `bridge::handshake` says over what) and hands them to the core.
async fn make_proofs(key: String, server_message: String, client_message: String) {
    let made = async {
        let subtle = chrome::global_path(&["crypto", "subtle"]);
        let algorithm = from_json(r#"{"name":"HMAC","hash":"SHA-256"}"#);
        let promise = |value: JsValue| value.dyn_into::<js_sys::Promise>().map(JsFuture::from);
        let raw = js_sys::Uint8Array::from(key.as_bytes());
        let import = [
            JsValue::from_str("raw"),
            raw.into(),
            algorithm.clone(),
            JsValue::FALSE,
            from_json(r#"["sign"]"#),
        ];
        let key = promise(chrome::call_method(&subtle, "importKey", &import)?)?.await?;
        let mut proofs = [String::new(), String::new()];
        for (proof, message) in proofs.iter_mut().zip([server_message, client_message]) {
            let data = js_sys::Uint8Array::from(message.as_bytes());
            let args = [algorithm.clone(), key.clone(), data.into()];
            let mac = promise(chrome::call_method(&subtle, "sign", &args)?)?.await?;
            *proof = handshake::hex(&js_sys::Uint8Array::new(&mac).to_vec());
        }
        Ok::<_, JsValue>(proofs)
    }
    .await
    .map(|[server, client]| (server, client))
    .map_err(|e| error_text(&e));
    run(with_core(|core| core.proofs_made(made)));
    persist_status();
}

/// A fresh nonce for one socket's handshake, from the browser's CSPRNG.
fn fresh_nonce() -> Nonce {
    let bytes = js_sys::Uint8Array::new_with_length(handshake::NONCE_BYTES as u32);
    chrome::get_random_values(&bytes);
    let mut nonce = [0u8; handshake::NONCE_BYTES];
    bytes.copy_to(&mut nonce);
    Nonce(nonce)
}

async fn instance_id() -> String {
    if let Ok(stored) = JsFuture::from(chrome::local_get(&JsValue::from_str("instance_id"))).await
        && let Some(id) = get(&stored, "instance_id").as_string()
    {
        return id;
    }
    let crypto = chrome::global_path(&["crypto"]);
    let id = chrome::call_method(&crypto, "randomUUID", &[])
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    let _ = chrome::local_set(&from_json(&json!({ "instance_id": id }).to_string()));
    id
}

/// Every open tab's id and URL.
async fn open_tabs() -> Vec<(TabId, String)> {
    let Ok(tabs) = JsFuture::from(chrome::tabs_query(&from_json("{}"))).await else {
        return Vec::new();
    };
    Array::from(&tabs)
        .iter()
        .filter_map(|t| {
            Some((
                get(&t, "id").as_f64()? as TabId,
                get(&t, "url").as_string()?,
            ))
        })
        .collect()
}

// ---- carrying out actions --------------------------------------------------------------------

pub(crate) fn run(actions: Vec<Action>) {
    let mut persist_tabs = false;
    for action in actions {
        match action {
            Action::Frame(frame) => send_frame(&frame),
            Action::MakeProofs {
                key,
                server_message,
                client_message,
            } => spawn_local(make_proofs(key, server_message, client_message)),
            Action::Close { code, reason } => {
                if let Some(socket) = LINK.with(|l| l.borrow().socket.clone())
                    && let Err(e) = socket.close_with_code_and_reason(code, &reason)
                {
                    log(&format!("closing the socket failed: {}", error_text(&e)));
                }
            }
            Action::ToTab {
                tab,
                message,
                on_reply,
            } => {
                if !post_to_page(tab, &message, &on_reply) {
                    spawn_local(to_tab(tab, message, on_reply));
                }
            }
            Action::OpenTab {
                id,
                url,
                tab,
                wait_loaded_ms,
            } => spawn_local(open_tab(id, url, tab, wait_loaded_ms)),
            Action::Browser { id, op } => spawn_local(async move {
                let reply = super::browser::perform(op).await;
                run(with_core(|core| core.on_browser_reply(id, reply)));
            }),
            Action::PageOp { id, tab, call } => spawn_local(page_op(id, tab, call)),
            // Taken out by the `message` event, which answers the page with its outcome.
            Action::TrustedInput { tab, .. } => log(&format!(
                "trusted input for tab {tab} outside a page message: dropped"
            )),
            Action::SyncContentScripts(patterns) => {
                SCRIPTS.with(|s| s.borrow_mut().wanted = Some(patterns));
                spawn_local(sync_content_scripts());
            }
            Action::RefreshTabs => spawn_local(refresh_tabs()),
            Action::PersistTabs => persist_tabs = true,
            Action::PersistAdapters => {
                let adapters = with_core(|core| core.adapters_json());
                let items = format!(r#"{{"adapters":{adapters}}}"#);
                let _ = chrome::session_set(&from_json(&items));
            }
            Action::PersistGrants(grants) => {
                let _ = chrome::session_set(&from_json(&format!(r#"{{"grants":{grants}}}"#)));
            }
            Action::AnswerPopup { id, answer } => super::popup::answer(&id, &answer),
            Action::ShowAgents { frame, agents } => {
                let _ = chrome::session_set(&from_json(&format!(r#"{{"agents":{frame}}}"#)));
                super::tab_groups::show(agents);
            }
            Action::PersistRecordings => {
                let recordings = with_core(|core| core.recordings_json());
                let items = format!(r#"{{"recordings":{recordings}}}"#);
                let _ = chrome::session_set(&from_json(&items));
            }
            Action::Log(message) => log(&message),
            // worker.js asks Chrome and tells back `load_looked` (cheaper in wasm than a future).
            Action::LookAtLoad { tab, load } => {
                let args = [JsValue::from(tab as f64), JsValue::from(load as f64)];
                let _ = chrome::call_method(&js_sys::global(), "__tabwireLookAtLoad", &args);
            }
            Action::HurryRuntime { tab, document } => {
                let document = document.map_or(JsValue::NULL, JsValue::from);
                let args = [JsValue::from(tab as f64), document];
                let _ = chrome::call_method(&js_sys::global(), "__tabwireHurryRuntime", &args);
            }
            Action::After { ms, timer } => after(ms, timer),
        }
    }
    if persist_tabs {
        // One request for both: the status's queue count moves with what the tabs send.
        let (tabs, status) = (with_core(|core| core.tabs_json()), status_json());
        let items = format!(r#"{{"tabs":{tabs},"status":{status}}}"#);
        let _ = chrome::session_set(&from_json(&items));
    }
}

/// Calls [`Core::on_timer`] with `timer` after `ms`.
fn after(ms: f64, timer: Timer) {
    let fire = Closure::once_into_js(move || run(with_core(|core| core.on_timer(timer))));
    chrome::set_timeout(fire.unchecked_ref(), ms);
}

fn persist_status() {
    let status = status_json();
    let _ = chrome::session_set(&from_json(&format!(r#"{{"status":{status}}}"#)));
}

/// The link's status as the popup reads it from `storage.session`.
fn status_json() -> String {
    with_core(|core| serde_json::to_string(&core.status()).expect("status serializes"))
}

/// Brings the registered content script in line with the adapters' patterns, one change at a
/// time (concurrent register calls would collide on the script id).
async fn sync_content_scripts() {
    let already = SCRIPTS.with(|s| std::mem::replace(&mut s.borrow_mut().running, true));
    if already {
        return;
    }
    while let Some(patterns) = SCRIPTS.with(|s| s.borrow_mut().wanted.take()) {
        if let Err(e) = apply_content_scripts(&patterns).await {
            log(&format!(
                "registering the content script for {patterns:?} failed: {}",
                error_text(&e)
            ));
        }
    }
    SCRIPTS.with(|s| s.borrow_mut().running = false);
}

async fn apply_content_scripts(patterns: &[String]) -> Result<(), JsValue> {
    let filter = from_json(&json!({ "ids": [SCRIPT_ID] }).to_string());
    let registered = JsFuture::from(chrome::get_registered_content_scripts(&filter)).await?;
    let exists = Array::from(&registered).length() > 0;
    if patterns.is_empty() {
        if exists {
            JsFuture::from(chrome::unregister_content_scripts(&filter)).await?;
        }
        return Ok(());
    }
    let script = json!([{
        "id": SCRIPT_ID, "js": [LOADER], "matches": patterns,
        "runAt": PRELOAD_RUN_AT, "allFrames": false,
    }]);
    let script = from_json(&script.to_string());
    let promise = if exists {
        chrome::update_content_scripts(&script)
    } else {
        chrome::register_content_scripts(&script)
    };
    JsFuture::from(promise).await?;
    Ok(())
}

/// Pushes the adapters to every open tab they match (injecting the runtime where it is missing)
/// and to every known tab, which then announces its tools again.
async fn refresh_tabs() {
    let open = open_tabs().await;
    run(with_core(|core| core.refresh(&open)));
}
