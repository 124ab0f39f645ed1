//! Calls to tabs, for the glue: a message to a tab's page (over its port, or
//! `tabs.sendMessage`) and what its answer or failure means, a page tool's call (injecting the
//! runtime first where none runs), opening a tab and waiting for its page to load, and telling a
//! closing tab from a slow one.

use super::*;
use crate::core::frame_send_failure;
use crate::web::state::CONTENT_SCRIPTS;

/// Injects the runtime (its companions, then the loader) into `tab`'s top frame.
async fn inject_runtime(tab: TabId) -> Result<JsValue, JsValue> {
    let injection = json!({"target": {"tabId": tab, "frameIds": [0]}, "files": CONTENT_SCRIPTS});
    JsFuture::from(chrome::execute_script(&from_json(&injection.to_string()))).await
}

/// Whether `tab` is being closed: Chrome's "No tab with id" error if it disappears within the
/// looks [`GoneProbe`] allows.
async fn tab_gone(tab: TabId) -> Option<String> {
    let mut probe = GoneProbe::default();
    loop {
        let look = JsFuture::from(chrome::tabs_get(tab as f64))
            .await
            .map(drop)
            .map_err(|e| error_text(&e));
        match probe.looked(look) {
            Next::Gone(why) => return Some(why),
            Next::StillThere => return None,
            Next::LookAfter(ms) => sleep(ms).await,
        }
    }
}

pub(super) async fn to_tab(tab: TabId, message: String, on_reply: OnReply) {
    let sent = FRAME0.with(|options| chrome::tabs_send_message(tab as f64, &message, options));
    let reply = JsFuture::from(sent).await;
    on_tab_reply(tab, reply, on_reply).await;
}

/// The page's answer to a message (or why there is none), from `tabs.sendMessage` or the port.
pub(super) async fn on_tab_reply(tab: TabId, reply: Result<JsValue, JsValue>, on_reply: OnReply) {
    match on_reply {
        OnReply::CallTool(id) => {
            let mut reply = reply.map(|v| v.as_string()).map_err(|e| error_text(&e));
            // Closing a tab closes its message channel before tabs.onRemoved fires: ask Chrome
            // whether the tab is gone, so the caller hears TAB_CLOSED, not NAVIGATED.
            if page_life::needs_looks(&reply) {
                reply = page_life::settle(reply, tab_gone(tab).await);
            }
            look_at_top_document(tab, &id).await;
            run(with_core(|core| core.on_call_reply(&id, reply)));
        }
        OnReply::State(id) => {
            let reply = reply.map(|v| v.as_string()).map_err(|e| error_text(&e));
            look_at_top_document(tab, &id).await;
            run(with_core(|core| core.on_state_reply(&id, tab, reply)));
        }
        OnReply::InjectIfMissing => {
            if reply.is_err()
                && let Err(e) = inject_runtime(tab).await
            {
                log(&format!(
                    "could not inject the runtime into tab {tab}: {}",
                    error_text(&e)
                ));
            }
        }
        OnReply::Nothing => {}
    }
}

/// Issue 26: before an answer checked after the fact is read, the core hears what the browser
/// says the tab's top document is now (its commit's event may not have reached the worker yet).
/// A tab the browser cannot describe leaves the check to what the core heard.
async fn look_at_top_document(tab: TabId, id: &str) {
    if !with_core(|core| core.answer_is_checked(id)) {
        return;
    }
    let details = from_json(&json!({"tabId": tab, "frameId": 0}).to_string());
    let Ok(frame) = JsFuture::from(chrome::get_frame(&details)).await else {
        return;
    };
    if let Some(url) = get(&frame, "url").as_string() {
        with_core(|core| core.heard_top_document(tab, &url));
    }
}

/// How long a page tool's call waits for a runtime it injected to connect its port. The call goes
/// out as the port connects (`runtime.onConnect` wakes it: no extra wait before the first answer
/// on a page whose runtime was still starting, issue 32).
const INJECTED_PORT_WAIT_MS: f64 = 5000.0;

/// Sends a page tool's call to `tab` (or the focused tab), first injecting the runtime into a
/// page where none runs (`content.js` does nothing where one does).
pub(super) async fn page_op(id: String, tab: Option<TabId>, mut call: PageCall) {
    let tab = match tab {
        Some(tab) => tab,
        None => {
            let actions = match focused_tab().await {
                // Back through the core: that tab may be loading another page.
                Some(tab) => with_core(|core| core.page_op(id, Some(tab), call)),
                None => {
                    let error = WireError::new(
                        ErrorCode::NoSuchTab,
                        "no tab is focused: pass tab_id (browser_tabs lists the tabs)",
                    );
                    with_core(|core| core.fail_call(&id, error))
                }
            };
            return run(actions);
        }
    };
    // A ref of a cross-origin frame (`f3e12`) goes to that frame's runtime.
    let frame = call.frame;
    // The permission gate allowed an origin: the page acts only while the tab shows it. The top
    // frame's runtime checks its own document as it starts the call (no round trip to the
    // browser); a frame's call, or one to a page with no runtime yet, is checked here first.
    let allowed = call.origin.clone();
    if frame != 0 {
        call.origin = None;
    }
    let timeout_ms = call.timeout_ms;
    let message = ToPage::PageOp {
        id: id.clone(),
        tab,
        call,
    };
    let message = serde_json::to_string(&message).expect("page messages serialize");
    let on_reply = OnReply::CallTool(id.clone());
    if frame == 0 && post_to_page(tab, &message, &on_reply) {
        return;
    }
    // A tab that is gone fails below, as TAB_CLOSED.
    if let Some(allowed) = &allowed
        && let Ok(shown) = JsFuture::from(chrome::tabs_get(tab as f64)).await
    {
        let url = get(&shown, "url").as_string().unwrap_or_default();
        if let Err(error) =
            bridge::browser_ops::still_shows(tab, allowed, &url, "the page tool did not act")
        {
            return run(with_core(|core| core.fail_call(&id, error)));
        }
    }
    if frame != 0 {
        return frame_page_op(id, tab, frame, message).await;
    }
    if let Err(e) = inject_runtime(tab).await {
        let why = error_text(&e);
        let error = if why.contains("No tab with id") {
            WireError::new(
                ErrorCode::TabClosed,
                format!("tab {tab} does not exist (closed?)"),
            )
        } else {
            WireError::new(
                ErrorCode::NotActionable,
                format!("Tabwire cannot run in tab {tab}'s page: {why}"),
            )
        };
        return run(with_core(|core| core.fail_call(&id, error)));
    }
    let deadline = js_sys::Date::now() + INJECTED_PORT_WAIT_MS.min(timeout_ms as f64);
    // The port may have connected while the script was being injected; a port that connects but
    // takes no message (another document's) leaves the call waiting for the next one.
    loop {
        if post_to_page(tab, &message, &on_reply) {
            return;
        }
        let left = deadline - js_sys::Date::now();
        if left <= 0.0 || port_connected(tab, left).await == WaitEnd::GaveUp {
            break;
        }
    }
    to_tab(tab, message, on_reply).await;
}

/// The active tab of the window that last had the focus.
async fn focused_tab() -> Option<TabId> {
    let query = from_json(r#"{"active":true,"lastFocusedWindow":true}"#);
    let tabs = JsFuture::from(chrome::tabs_query(&query)).await.ok()?;
    get(&Array::from(&tabs).get(0), "id")
        .as_f64()
        .map(|t| t as TabId)
}

pub(super) async fn open_tab(
    id: String,
    url: String,
    tab: Option<TabId>,
    wait_loaded_ms: Option<u64>,
) {
    // What the tab shows before, to tell its next page from it (`page_life::loaded`).
    let before = match (tab, wait_loaded_ms) {
        (Some(tab), Some(_)) => JsFuture::from(chrome::tabs_get(tab as f64))
            .await
            .ok()
            .and_then(|info| get(&info, "url").as_string())
            .unwrap_or_default(),
        _ => "about:blank".to_owned(),
    };
    let promise = match tab {
        Some(tab) => chrome::tabs_update(
            tab as f64,
            &from_json(&json!({"url": url, "active": true}).to_string()),
        ),
        None => chrome::tabs_create(&from_json(&json!({ "url": url }).to_string())),
    };
    let reply = JsFuture::from(promise)
        .await
        .map_err(|e| error_text(&e))
        .and_then(|t| {
            get(&t, "id")
                .as_f64()
                .map(|t| t as TabId)
                .ok_or_else(|| "Chrome returned no tab".to_owned())
        });
    if let (None, Ok(opened)) = (tab, &reply) {
        run(with_core(|core| core.on_tab_opened(*opened)));
    }
    let loaded = match (&reply, wait_loaded_ms) {
        (Ok(tab), Some(wait_ms)) => page_loaded(*tab, &before, &url, wait_ms as f64).await,
        _ => None,
    };
    run(with_core(|core| core.on_open_tab_reply(&id, reply, loaded)));
}

/// Waits until `tab`'s page has finished loading (looking every [`page_life::LOAD_EVERY_MS`], at
/// most `wait_ms`), then asks the page whether Tabwire's runtime runs or is starting there,
/// injecting it into a page an adapter matches where it is missing (`None`: still loading), and
/// where a runtime runs, waits (bounded) for its warm-up.
async fn page_loaded(tab: TabId, before: &str, target: &str, wait_ms: f64) -> Option<LoadedPage> {
    let deadline = js_sys::Date::now() + wait_ms;
    let loaded = loop {
        let info = JsFuture::from(chrome::tabs_get(tab as f64)).await.ok()?;
        let status = get(&info, "status").as_string();
        let url = get(&info, "url").as_string().unwrap_or_default();
        if page_life::loaded(page_life::Opening {
            status: status.as_deref(),
            pending_url: !get(&info, "pendingUrl").is_undefined(),
            url: &url,
            before,
            target,
        }) {
            break info;
        }
        if js_sys::Date::now() + page_life::LOAD_EVERY_MS > deadline {
            return None;
        }
        sleep(page_life::LOAD_EVERY_MS).await;
    };
    // worker.js's probe runs in the content scripts' world, where content.js and the WebMCP
    // loader leave their marks (a page Chrome does not let us script has no runtime either).
    let probed = in_top_frame(tab, "__tabwireRuntimeProbe", None).await;
    let mark = |name: &str| get(&probed, name).as_bool().unwrap_or(false);
    let (runtime, webmcp) = (mark("runtime"), mark("webmcp"));
    let url = get(&loaded, "url").as_string().unwrap_or_default();
    let (adapter_matches, preloaded) =
        with_core(|core| (core.any_adapter_matches(&url), core.preloads(&url)));
    let (page, runs) = match page_life::after_load(runtime, webmcp, adapter_matches, preloaded) {
        AfterLoad::Report(page) => (page, runtime),
        AfterLoad::Inject { tools_coming } => {
            let injected = inject_runtime(tab).await.is_ok();
            let page = LoadedPage {
                runtime: injected && tools_coming,
            };
            (page, injected)
        }
    };
    // Until the runtime has warmed its call path up (at most `wait_ms`), so that the first call
    // after `browser_open` is as fast as the next; a probe that fails or gives up only ends it.
    if let Some(wait_ms) = page_life::warm_wait_ms(runs, deadline - js_sys::Date::now()) {
        in_top_frame(tab, "__tabwireWarmProbe", Some(wait_ms)).await;
    }
    Some(page)
}

/// The result of `worker.js`'s function `func` (awaited), run with `arg` in `tab`'s top frame,
/// in the content scripts' world; `undefined` when it could not run there.
async fn in_top_frame(tab: TabId, func: &str, arg: Option<f64>) -> JsValue {
    let injection = from_json(&format!(r#"{{"target":{{"tabId":{tab},"frameIds":[0]}}}}"#));
    let _ = js_sys::Reflect::set(&injection, &"func".into(), &chrome::global_path(&[func]));
    if let Some(arg) = arg {
        let _ = js_sys::Reflect::set(&injection, &"args".into(), &Array::of1(&arg.into()));
    }
    match JsFuture::from(chrome::execute_script(&injection)).await {
        Ok(results) => get(&Array::from(&results).get(0), "result"),
        Err(_) => JsValue::UNDEFINED,
    }
}

/// Sends page op `message` (call `id`) to frame `frame` of `tab`, whose runtime gave the ref
/// it names; no runtime there any more makes that ref stale.
async fn frame_page_op(id: String, tab: TabId, frame: bridge::page_ops::FrameId, message: String) {
    let sent = chrome::tabs_send_message(
        tab as f64,
        &message,
        &crate::web::frames::frame_options(frame),
    );
    match JsFuture::from(sent).await {
        Err(e) => {
            let error = frame_send_failure(tab, frame, &error_text(&e));
            run(with_core(|core| core.fail_call(&id, error)));
        }
        reply => on_tab_reply(tab, reply, OnReply::CallTool(id)).await,
    }
}
