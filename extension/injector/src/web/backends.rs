//! The browser side of each tool back-end (`crate::tools::Backends`): adapter steps against the
//! real DOM ([`WebDom`]), a code adapter's handler from the bundle (`extension/dist/code-adapters.js`),
//! and the page's own tools (WebMCP), relayed to the page's world by `extension/webmcp.js` as
//! CustomEvents with JSON string details (untrusted).

use std::cell::RefCell;
use std::collections::HashMap;

use bridge::adapter::ToolDef;
use bridge::template::Vars;
use bridge::webmcp::{self, PageTool};
use bridge::{ErrorCode, WireError};
use js_sys::{Function, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::basics::{location_and_title, set_timeout};
use super::dom::WebDom;
use crate::steps::{Outcome, run_tool};
use crate::tools::{Backends, StepsRun};

const PAGE_RESULT_EVENT: &str = "tabwire:webmcp-result";

thread_local! {
    /// Calls of page tools waiting for the page: the `resolve` of each one's promise.
    static PAGE_CALLS: RefCell<HashMap<String, Function>> = RefCell::new(HashMap::new());
}

/// The back-ends in this page; the state push is the runtime's.
pub struct WebBackends {
    pub on_state_change: fn(),
    /// The call's id when its input goes through Chrome's debugger (trusted input).
    pub trusted_call: Option<String>,
    /// The files the call carries.
    pub files: std::rc::Rc<[bridge::upload::UploadFile]>,
}

impl Backends for WebBackends {
    async fn steps(&self, run: StepsRun<'_>) -> Result<Outcome, WireError> {
        let dom = WebDom::new()
            .ok_or_else(|| WireError::new(ErrorCode::Internal, "this page has no document"))?
            .with_trusted_input(self.trusted_call.clone())
            .with_files(self.files.clone());
        let StepsRun {
            tool,
            args,
            resume_at,
            timeout_ms,
            cancelled,
        } = run;
        run_tool(&dom, tool, args, resume_at, timeout_ms, cancelled).await
    }

    async fn code(
        &self,
        adapter: &str,
        tool: &ToolDef,
        args: Vars,
        timeout_ms: u64,
    ) -> Result<Value, WireError> {
        let handler = code_handler(adapter, &tool.name).ok_or_else(|| {
            WireError::new(
                ErrorCode::AdapterError,
                format!(
                    "{}: the extension's bundle has no handler for this code adapter's tool",
                    tool.name
                ),
            )
        })?;
        call_code_tool(&handler, &tool.name, args, timeout_ms).await
    }

    async fn page(
        &self,
        id: &str,
        tool: &PageTool,
        args: Vars,
        timeout_ms: u64,
    ) -> Result<Value, WireError> {
        call_page_tool(id, tool, args, timeout_ms).await
    }

    fn state_may_have_changed(&self) {
        (self.on_state_change)();
    }
}

// ----- WebMCP: tools the page registers itself --------------------------------------------------

/// Listens for the answers of the page's own tools. Any answer to a pending call resolves it at
/// once, even one too large or too deeply nested to read (`call_page_tool` says which): the relay
/// writes the call's id first.
pub fn listen_for_page_results(document: &web_sys::Document) {
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
        if let Some(resolve) = PAGE_CALLS.with(|c| c.borrow_mut().remove(id)) {
            let _ = resolve.call1(&JsValue::NULL, &detail);
        }
    })
    .into_js_value();
    let _ = document.add_event_listener_with_callback(PAGE_RESULT_EVENT, on_result.unchecked_ref());
}

/// The call id a WebMCP result starts with (`{"id":"<id>",...`).
fn result_id(detail: &str) -> Option<&str> {
    detail.strip_prefix(r#"{"id":""#)?.split('"').next()
}

/// Ends the wait of call `id` of a page tool, if one waits: it was cancelled.
pub fn cancel_page_call(id: &str) {
    if let Some(resolve) = PAGE_CALLS.with(|c| c.borrow_mut().remove(id)) {
        let _ = resolve.call1(&JsValue::NULL, &JsValue::FALSE);
    }
}

/// A CustomEvent's `detail`, when it is a string of at most `max` bytes.
pub fn event_detail(event: &JsValue, max: usize) -> Option<String> {
    Reflect::get(event, &"detail".into())
        .ok()?
        .as_string()
        .filter(|d| d.len() <= max)
}

/// Relays a call to the page's own tool and waits for its answer, the deadline or a cancel.
async fn call_page_tool(
    id: &str,
    tool: &PageTool,
    args: Vars,
    timeout_ms: u64,
) -> Result<Value, WireError> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| WireError::new(ErrorCode::Internal, "this page has no document"))?;
    let key = id.to_owned();
    let answer = Promise::new(&mut |resolve, _reject| {
        let on_timeout = resolve.clone();
        PAGE_CALLS.with(|c| c.borrow_mut().insert(key.clone(), resolve));
        let fire = Closure::once_into_js(move || {
            let _ = on_timeout.call1(&JsValue::NULL, &JsValue::NULL);
        });
        set_timeout(fire.unchecked_ref(), timeout_ms as f64);
    });
    let call = serde_json::json!({"id": id, "name": tool.page_name, "args": args});
    super::basics::dispatch(&document, "tabwire:webmcp-call", &call.to_string());
    let outcome = JsFuture::from(answer).await;
    PAGE_CALLS.with(|c| c.borrow_mut().remove(id));
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
    let reply = match serde_json::from_str::<Value>(&text) {
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
    if reply.get("ok").and_then(Value::as_bool) == Some(true) {
        let value = reply.get("value").cloned().unwrap_or(Value::Null);
        Ok(webmcp::page_result(&location_and_title().0, value))
    } else {
        let why: String = reply
            .get("error")
            .and_then(Value::as_str)
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

/// The handler `extension/dist/code-adapters.js` holds for `adapter`'s `tool`, if it is a code tool.
fn code_handler(adapter: &str, tool: &str) -> Option<Function> {
    // Each level is checked before the next lookup: `Reflect.get` on `undefined` throws, and a
    // thrown exception costs the runtime a slot of wasm-bindgen's externref table for good.
    let property = |of: &JsValue, key: &str| {
        Reflect::get(of, &key.into())
            .ok()
            .filter(JsValue::is_object)
    };
    let bundle = property(
        &super::basics::CONTENT_GLOBAL.with(JsValue::clone),
        "__tabwireCodeAdapters",
    )?;
    let tools = property(&property(&bundle, "handlers")?, adapter)?;
    Reflect::get(&tools, &tool.into()).ok()?.dyn_into().ok()
}

/// Runs a code tool's handler under the call's deadline; its result must be JSON.
async fn call_code_tool(
    handler: &Function,
    name: &str,
    args: Vars,
    timeout_ms: u64,
) -> Result<Value, WireError> {
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
    let args = Value::Object(args).to_string();
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
        return Ok(Value::Null);
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
