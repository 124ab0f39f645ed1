//! Bindings to the extension APIs and globals the service worker uses (promise-returning forms).

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;

/// Declares `pub fn name(args) -> Promise`, bound to `chrome.<namespace>.<method>`: the extension
/// APIs the worker calls that answer with a promise, one a line (the others follow, below).
macro_rules! chrome_promises {
    ($([$($namespace:tt),+] $method:ident => fn $name:ident($($arg:ident: $ty:ty),*);)*) => {
        #[wasm_bindgen]
        extern "C" {
            $(
                #[wasm_bindgen(js_namespace = ["chrome", $($namespace),+], js_name = $method)]
                pub fn $name($($arg: $ty),*) -> Promise;
            )*
        }
    };
}

chrome_promises! {
    ["tabs"] sendMessage => fn tabs_send_message(tab: f64, message: &str, options: &JsValue);
    ["tabs"] get => fn tabs_get(tab: f64);
    ["webNavigation"] getAllFrames => fn get_all_frames(details: &JsValue);
    ["webNavigation"] getFrame => fn get_frame(details: &JsValue);
    ["tabs"] query => fn tabs_query(query: &JsValue);
    ["tabs"] create => fn tabs_create(properties: &JsValue);
    ["tabs"] update => fn tabs_update(tab: f64, properties: &JsValue);
    ["tabs"] goBack => fn tabs_go_back(tab: f64);
    ["tabs"] goForward => fn tabs_go_forward(tab: f64);
    ["tabs"] reload => fn tabs_reload(tab: f64);
    ["tabs"] remove => fn tabs_remove(tab: f64);
    ["tabs"] captureVisibleTab => fn tabs_capture_visible_tab(window: f64, options: &JsValue);
    ["windows"] create => fn windows_create(properties: &JsValue);
    ["windows"] get => fn windows_get(window: f64);
    ["windows"] remove => fn windows_remove(window: f64);
    ["storage", "session"] remove => fn session_remove(keys: &str);
    ["windows"] update => fn windows_update(window: f64, properties: &JsValue);
    ["scripting"] registerContentScripts => fn register_content_scripts(scripts: &JsValue);
    ["scripting"] updateContentScripts => fn update_content_scripts(scripts: &JsValue);
    ["scripting"] unregisterContentScripts => fn unregister_content_scripts(filter: &JsValue);
    ["scripting"] getRegisteredContentScripts => fn get_registered_content_scripts(filter: &JsValue);
    ["scripting"] executeScript => fn execute_script(injection: &JsValue);
    ["storage", "local"] get => fn local_get(keys: &JsValue);
    ["storage", "local"] set => fn local_set(items: &JsValue);
    ["storage", "session"] get => fn session_get(keys: &JsValue);
    ["storage", "session"] set => fn session_set(items: &JsValue);
    ["downloads"] search => fn downloads_search(query: &JsValue);
    ["runtime"] getPlatformInfo => fn runtime_get_platform_info();
    ["alarms"] create => fn alarms_create(name: &str, info: &JsValue);
}

#[wasm_bindgen]
extern "C" {
    // `catch`: a browser without tab groups (Firefox before its tab-group API) throws here.
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = group)]
    pub fn tabs_group(options: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = ungroup)]
    pub fn tabs_ungroup(tabs: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabGroups"], js_name = update)]
    pub fn tab_groups_update(group: f64, properties: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getURL)]
    pub fn runtime_get_url(path: &str) -> String;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getManifest)]
    pub fn runtime_get_manifest() -> JsValue;

    /// A `runtime.Port` (a page's long-lived channel to the worker).
    #[derive(Clone)]
    pub type Port;
    #[wasm_bindgen(method, catch, js_name = postMessage)]
    pub fn post_message(this: &Port, message: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(method, getter)]
    pub fn sender(this: &Port) -> JsValue;
    #[wasm_bindgen(method, getter, js_name = onMessage)]
    pub fn on_message(this: &Port) -> ChromeEvent;
    #[wasm_bindgen(method, getter, js_name = onDisconnect)]
    pub fn on_disconnect(this: &Port) -> ChromeEvent;
    pub type ChromeEvent;
    #[wasm_bindgen(method, js_name = addListener)]
    pub fn add_listener(this: &ChromeEvent, listener: &Function);

    #[wasm_bindgen(js_name = fetch)]
    pub fn fetch(url: &str) -> Promise;
    #[wasm_bindgen(js_name = fetch)]
    pub fn fetch_with(url: &str, init: &JsValue) -> Promise;
    /// `AbortSignal.timeout(ms)`: a signal that aborts a fetch after `ms`.
    #[wasm_bindgen(js_namespace = AbortSignal, js_name = timeout)]
    pub fn abort_after(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(callback: &Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = setInterval)]
    pub fn set_interval(callback: &Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_namespace = console, js_name = warn)]
    pub fn console_warn(message: &str);
    /// `crypto.getRandomValues(array)`: the browser's CSPRNG.
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    pub fn get_random_values(array: &js_sys::Uint8Array);
}

/// `globalThis.a.b.c`, or `undefined` when any link is missing.
pub fn global_path(path: &[&str]) -> JsValue {
    let mut value: JsValue = js_sys::global().into();
    for key in path {
        if value.is_undefined() || value.is_null() {
            return JsValue::UNDEFINED;
        }
        value = Reflect::get(&value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
    }
    value
}

/// `object[key]` (`undefined` on failure).
pub fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// Calls `object[method](...args)`.
pub fn call_method(object: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let function: Function = get(object, method).dyn_into()?;
    Reflect::apply(&function, object, &args.iter().collect())
}

/// A JS value from JSON text (option objects, storage items).
pub fn from_json(json: &str) -> JsValue {
    js_sys::JSON::parse(json).unwrap_or(JsValue::UNDEFINED)
}

/// JSON text of a JS value.
pub fn to_json(value: &JsValue) -> Option<String> {
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
}

/// A readable message from a rejection or exception.
pub fn error_text(error: &JsValue) -> String {
    if let Some(e) = error.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}
