//! The content script's browser side: [`start`] (called by `extension/content.js` with the build
//! that loaded), the `runtime.onMessage` listener, announcing the page's tools to the worker, and
//! running calls with their deadline and cancellation.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use bridge::page::{FromPage, RuntimeKind, ToPage};
use bridge::{ErrorCode, WireError};
use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};

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
}

pub(crate) fn set_timeout(callback: &Function, ms: f64) {
    set_timeout_js(callback, ms);
}

struct Page {
    runtime: Option<RuntimeKind>,
    catalog: Rc<Catalog>,
    /// Cancellation flags of the calls running now.
    running: HashMap<String, Rc<Cell<bool>>>,
}

thread_local! {
    static PAGE: RefCell<Page> = RefCell::new(Page { runtime: None, catalog: Rc::default(), running: HashMap::new() });
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
    }
    announce();
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

fn set_adapters(adapters: Vec<bridge::adapter::Adapter>) {
    let catalog = Catalog::new(adapters);
    let tools = catalog.specs();
    PAGE.with(|p| p.borrow_mut().catalog = Rc::new(catalog));
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
    match msg {
        ToPage::CallTool {
            id,
            tool,
            args,
            timeout_ms,
        } => {
            spawn_local(answer(
                id,
                tool,
                Start::Call(args),
                timeout_ms,
                send_response,
            ));
            JsValue::TRUE
        }
        ToPage::ContinueTool {
            id,
            tool,
            resume_at,
            vars,
            timeout_ms,
        } => {
            let start = Start::Continue { resume_at, vars };
            spawn_local(answer(id, tool, start, timeout_ms, send_response));
            JsValue::TRUE
        }
        ToPage::Adapters { adapters } => {
            set_adapters(adapters);
            JsValue::FALSE
        }
        ToPage::Cancel { id } => {
            if let Some(flag) = PAGE.with(|p| p.borrow().running.get(&id).cloned()) {
                flag.set(true);
            }
            JsValue::FALSE
        }
    }
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
async fn answer(id: String, tool: String, start: Start, timeout_ms: u64, send_response: Function) {
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
    let _ = send_response.call1(&JsValue::NULL, &JsValue::from(encode(&reply)));
    if let Some(url) = navigate_to
        && let Some(window) = web_sys::window()
        && let Err(e) = window.location().set_href(&url)
    {
        console_warn(&format!("tabwire: navigating to {url} failed: {e:?}"));
    }
}

async fn call(id: &str, tool: &str, start: Start, timeout_ms: u64) -> Result<Outcome, WireError> {
    let catalog = PAGE.with(|p| p.borrow().catalog.clone());
    let tool = catalog.find(tool)?;
    let (args, resume_at) = match start {
        Start::Call(args) => (check_args(tool, args)?, 0),
        Start::Continue { resume_at, vars } => (vars, resume_at),
    };
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
    result
}
