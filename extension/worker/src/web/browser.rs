//! The worker's browser requests (`bridge::browser_ops`): listing every tab, back/forward/reload/
//! activate/close, and screenshots (`chrome.tabs.captureVisibleTab`, bringing the tab to the front
//! when it is not the visible one, cropped to an element and downscaled by `worker.js`'s image
//! glue with `createImageBitmap` + `OffscreenCanvas`). What to do with Chrome's answers (which
//! error a failure is, the tab list, the crop and the size) is decided by the pure functions at
//! the top, tested on the host; the async part below only performs it.

use bridge::browser_ops::{
    BrowserOp, BrowserTab, Capture, Captured, ElementBox, FrameBox, Region, Shot, TabActed,
    TabAction, TabList, crop, fit, still_shows,
};
use bridge::page_ops::FrameId;
use bridge::protocol::TabId;
use bridge::{ErrorCode, WireError};
use serde_json::{Value, json};

/// How long a back/forward/reload waits for the page it set off to load before answering.
const LOAD_WAIT_MS: f64 = 10_000.0;
/// Chrome allows two captures a second per extension; a capture refused for that is retried
/// this often, this many times.
const CAPTURE_RETRY_MS: f64 = 550.0;
const CAPTURE_TRIES: u32 = 4;
/// How long a `history.go` in the page may take to start a navigation before it counts as
/// having had nowhere to go.
const HISTORY_WAIT_MS: f64 = 1_500.0;
/// How long an activated tab may take to become its window's selected tab.
const ACTIVATE_WAIT_MS: f64 = 2_000.0;

/// The code of a failed Chrome tab call, from its message.
pub fn tab_failure(what: &str, why: &str) -> WireError {
    let code = if why.contains("No tab with id") {
        ErrorCode::NoSuchTab
    } else if why.contains("Cannot find a next page in history") {
        ErrorCode::NoEffect
    } else {
        ErrorCode::Internal
    };
    WireError::new(code, format!("{what}: {why}"))
}

/// Whether a capture was refused only because captures came too fast.
pub fn over_capture_quota(why: &str) -> bool {
    why.contains("MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND")
}

/// The tab list from `chrome.tabs.query({})`'s tabs (as JSON) and the focused window's id.
pub fn tab_list(tabs: &[Value], focused_window: Option<f64>) -> TabList {
    let tabs = tabs
        .iter()
        .filter_map(|t| {
            Some(BrowserTab {
                id: t.get("id")?.as_u64()?,
                url: t.get("url")?.as_str()?.to_owned(),
                title: t
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                active: t.get("active").and_then(Value::as_bool).unwrap_or(false),
                focused_window: focused_window.is_some()
                    && t.get("windowId").and_then(Value::as_f64) == focused_window,
            })
        })
        .collect();
    TabList { tabs, agents: None }
}

/// Refuses a capture of a tab that no longer shows the origin the user allowed.
pub fn check_origin(capture: &Capture, url: &str) -> Result<(), WireError> {
    still_shows(capture.tab, &capture.origin, url, "nothing was captured")
}

/// Checks, after the fact, that the pixels captured are the allowed document's: the tab's top
/// document (`webNavigation.getFrame`'s `documentId` and URL) is the same one before the capture
/// and after it, of the allowed origin, and the tab was still the one its window showed. A page
/// that went to another origin meanwhile (it may navigate itself as it is brought to the front)
/// gets `NAVIGATED` and its pixels are dropped.
pub fn captured_the_same_document(
    capture: &Capture,
    before: &Value,
    after: &Value,
    still_active: bool,
) -> Result<(), WireError> {
    let document = |frame: &Value| {
        frame
            .get("documentId")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    check_origin(
        capture,
        after.get("url").and_then(Value::as_str).unwrap_or(""),
    )?;
    let (was, is) = (document(before), document(after));
    if was.is_none() || was != is || !still_active {
        return Err(WireError::new(
            ErrorCode::Navigated,
            format!(
                "tab {} showed another document while it was captured: the capture was dropped; \
                 take the screenshot again",
                capture.tab
            ),
        ));
    }
    Ok(())
}

/// The frame the element of `shot` is in (0: the top document), and how an error names it.
pub fn shot_frame(shot: &Shot) -> (FrameId, String) {
    match shot {
        Shot::Selector(selector) => (0, format!("{selector:?}")),
        Shot::Ref { name, .. } => {
            let frame = bridge::page_ops::parse_ref(name).map_or(0, |r| r.frame);
            (frame, name.clone())
        }
    }
}

/// The element's box from `worker.js`'s `elementBox` run in its frame: the box; a string saying
/// the selector is not valid; `{stale}` when the ref's runtime no longer has it; nothing when no
/// element matches.
pub fn read_element_box(found: Value, tab: TabId, what: &str) -> Result<ElementBox, WireError> {
    match found {
        Value::Object(ref o) if o.contains_key("stale") => Err(WireError::new(
            ErrorCode::StaleRef,
            o["stale"].as_str().unwrap_or("the ref is gone"),
        )),
        Value::Object(_) => serde_json::from_value(found)
            .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string())),
        Value::String(problem) => Err(WireError::new(ErrorCode::InvalidArgs, problem)),
        _ => Err(WireError::new(
            ErrorCode::ElementNotFound,
            format!("no element matches {what} in tab {tab}"),
        )),
    }
}

/// The region of the capture to keep and the size to draw it at.
pub fn plan(
    capture: &Capture,
    element: Option<&ElementBox>,
    image_width: u32,
    image_height: u32,
) -> Result<(Region, (u32, u32)), WireError> {
    let region = match element {
        None => Region {
            x: 0,
            y: 0,
            width: image_width,
            height: image_height,
        },
        Some(element) => crop(element, image_width, image_height).ok_or_else(|| {
            WireError::new(
                ErrorCode::NotActionable,
                "the element has no visible box in the viewport (hidden, empty or off-screen)",
            )
        })?,
    };
    let size = fit(
        region.width,
        region.height,
        capture.max_width,
        capture.max_height,
    );
    Ok((region, size))
}

pub use performing::perform;

mod performing {
    use super::*;
    use crate::core::{FrameInfo, FrameRequest};
    use crate::web::chrome::{self, call_method, error_text, from_json, get, global_path, to_json};
    use wasm_bindgen::JsValue;
    use wasm_bindgen_futures::JsFuture;

    /// Performs `op` and returns its answer as the server decodes it.
    pub async fn perform(op: BrowserOp) -> Result<Value, WireError> {
        let answer = match op {
            BrowserOp::ListTabs => serde_json::to_value(list_tabs().await?),
            BrowserOp::Tab { tab, action } => serde_json::to_value(act(tab, action).await?),
            BrowserOp::Capture(capture) => serde_json::to_value(capture_tab(&capture).await?),
            BrowserOp::Downloads { tab } => {
                serde_json::to_value(crate::web::downloads::list(tab).await?)
            }
            BrowserOp::Handoff(show) => {
                serde_json::to_value(crate::web::handoff::show(show).await?)
            }
            BrowserOp::HandoffAnswer { handoff, wait_ms } => {
                serde_json::to_value(crate::web::handoff::answer(&handoff, wait_ms).await)
            }
            BrowserOp::EndHandoff { handoff } => {
                crate::web::handoff::end(&handoff).await;
                Ok(serde_json::json!({}))
            }
        };
        answer.map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))
    }

    async fn call(promise: js_sys::Promise, what: &str) -> Result<JsValue, WireError> {
        JsFuture::from(promise)
            .await
            .map_err(|e| tab_failure(what, &error_text(&e)))
    }

    fn json_of(value: &JsValue) -> Value {
        to_json(value)
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null)
    }

    async fn list_tabs() -> Result<TabList, WireError> {
        let all = call(chrome::tabs_query(&from_json("{}")), "listing the tabs").await?;
        let focused = call(
            chrome::tabs_query(&from_json(r#"{"active":true,"lastFocusedWindow":true}"#)),
            "finding the focused window",
        )
        .await?;
        let focused_window = json_of(&focused)
            .get(0)
            .and_then(|t| t.get("windowId"))
            .and_then(Value::as_f64);
        let tabs = match json_of(&all) {
            Value::Array(tabs) => tabs,
            _ => Vec::new(),
        };
        Ok(tab_list(&tabs, focused_window))
    }

    async fn tab_info(tab: TabId) -> Result<Value, WireError> {
        let info = call(chrome::tabs_get(tab as f64), &format!("tab {tab}")).await?;
        Ok(json_of(&info))
    }

    async fn act(tab: TabId, action: TabAction) -> Result<TabActed, WireError> {
        let what = format!("{} of tab {tab}", action.as_str());
        let id = tab as f64;
        let before = tab_info(tab).await?;
        match action {
            TabAction::Back | TabAction::Forward => {
                let step = if action == TabAction::Back { -1 } else { 1 };
                let went = match action {
                    TabAction::Back => JsFuture::from(chrome::tabs_go_back(id)).await,
                    _ => JsFuture::from(chrome::tabs_go_forward(id)).await,
                };
                if let Err(e) = went {
                    let refused = tab_failure(&what, &error_text(&e));
                    if refused.code != ErrorCode::NoEffect {
                        return Err(refused);
                    }
                    // Chrome's back button skips the pages that had no user activation (its
                    // history manipulation intervention), and an agent's pages never have one:
                    // go through the page's own history, as its scripts would.
                    history_go(tab, step, &before, refused).await?;
                }
                JsValue::UNDEFINED
            }
            TabAction::Reload => call(chrome::tabs_reload(id), &what).await?,
            TabAction::Activate => {
                if let Some(window) = before.get("windowId").and_then(Value::as_f64) {
                    let focus = from_json(r#"{"focused":true}"#);
                    call(chrome::windows_update(window, &focus), &what).await?;
                }
                call(
                    chrome::tabs_update(id, &from_json(r#"{"active":true}"#)),
                    &what,
                )
                .await?
            }
            TabAction::Close => {
                call(chrome::tabs_remove(id), &what).await?;
                return Ok(TabActed { tab, url: None });
            }
            // Holds are the hub's to decide: a server never sends these on.
            TabAction::Claim | TabAction::Release => {
                return Err(WireError::new(
                    ErrorCode::Protocol,
                    format!("{what}: holds are decided by the tabwire hub"),
                ));
            }
        };
        let url = match action {
            TabAction::Back | TabAction::Forward | TabAction::Reload => loaded_url(tab).await?,
            _ => tab_info(tab)
                .await?
                .get("url")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        Ok(TabActed { tab, url })
    }

    /// `history.go(step)` in `tab`'s page; `no_entry` when its URL did not change within
    /// [`HISTORY_WAIT_MS`] (there was no page that way).
    async fn history_go(
        tab: TabId,
        step: i32,
        before: &Value,
        no_entry: WireError,
    ) -> Result<(), WireError> {
        let injection = from_json(
            &json!({"target": {"tabId": tab, "frameIds": [0]}, "args": [step]}).to_string(),
        );
        let func = get(&global_path(&["__tabwireBrowser"]), "historyGo");
        let _ = js_sys::Reflect::set(&injection, &JsValue::from_str("func"), &func);
        call(
            chrome::execute_script(&injection),
            "going through the page's history",
        )
        .await?;
        let url = |info: &Value| info.get("url").and_then(Value::as_str).map(str::to_owned);
        let deadline = js_sys::Date::now() + HISTORY_WAIT_MS;
        loop {
            let now = tab_info(tab).await?;
            let moved = url(&now) != url(before)
                || now.get("status").and_then(Value::as_str) == Some("loading");
            if moved {
                return Ok(());
            }
            if js_sys::Date::now() > deadline {
                return Err(no_entry);
            }
            sleep(crate::page_life::LOAD_EVERY_MS).await;
        }
    }

    /// The tab's URL once its page has loaded (or the wait ran out).
    async fn loaded_url(tab: TabId) -> Result<Option<String>, WireError> {
        let deadline = js_sys::Date::now() + LOAD_WAIT_MS;
        loop {
            let info = tab_info(tab).await?;
            let done = info.get("status").and_then(Value::as_str) == Some("complete");
            if done || js_sys::Date::now() > deadline {
                return Ok(info.get("url").and_then(Value::as_str).map(str::to_owned));
            }
            sleep(crate::page_life::LOAD_EVERY_MS).await;
        }
    }

    async fn capture_tab(capture: &Capture) -> Result<Captured, WireError> {
        let tab = capture.tab;
        let info = tab_info(tab).await?;
        check_origin(
            capture,
            info.get("url").and_then(Value::as_str).unwrap_or(""),
        )?;
        let window = info
            .get("windowId")
            .and_then(Value::as_f64)
            .ok_or_else(|| WireError::new(ErrorCode::Internal, "the tab has no window"))?;
        let activated = info.get("active").and_then(Value::as_bool) != Some(true);
        if activated {
            let what = format!("bringing tab {tab} to the front");
            call(
                chrome::tabs_update(tab as f64, &from_json(r#"{"active":true}"#)),
                &what,
            )
            .await?;
            let deadline = js_sys::Date::now() + ACTIVATE_WAIT_MS;
            while tab_info(tab).await?.get("active").and_then(Value::as_bool) != Some(true)
                && js_sys::Date::now() < deadline
            {
                sleep(crate::page_life::LOAD_EVERY_MS).await;
            }
        }
        let element = match &capture.element {
            Some(shot) => Some(element_box(tab, shot).await?),
            None => None,
        };
        let before = top_document(tab).await?;
        check_origin(
            capture,
            before.get("url").and_then(Value::as_str).unwrap_or(""),
        )?;
        let data_url = capture_visible(window).await?;
        let after = top_document(tab).await?;
        let still_active =
            tab_info(tab).await?.get("active").and_then(Value::as_bool) == Some(true);
        captured_the_same_document(capture, &before, &after, still_active)?;
        let image = global_path(&["__tabwireBrowser"]);
        let bitmap = await_call(&image, "decode", &[JsValue::from_str(&data_url)]).await?;
        let width = get(&bitmap, "width").as_f64().unwrap_or(0.0) as u32;
        let height = get(&bitmap, "height").as_f64().unwrap_or(0.0) as u32;
        let (region, (out_width, out_height)) = plan(capture, element.as_ref(), width, height)?;
        let args = [
            bitmap,
            region.x.into(),
            region.y.into(),
            region.width.into(),
            region.height.into(),
            out_width.into(),
            out_height.into(),
            JsValue::from_str(capture.format.mime()),
        ];
        let data = await_call(&image, "encode", &args)
            .await?
            .as_string()
            .unwrap_or_default();
        Ok(Captured {
            data,
            width: out_width,
            height: out_height,
            activated,
        })
    }

    /// The tab's top document as `webNavigation` knows it (its `documentId` and URL).
    async fn top_document(tab: TabId) -> Result<Value, WireError> {
        let details = from_json(&serde_json::json!({"tabId": tab, "frameId": 0}).to_string());
        let frame = call(chrome::get_frame(&details), &format!("tab {tab}'s page")).await?;
        Ok(json_of(&frame))
    }

    async fn capture_visible(window: f64) -> Result<String, WireError> {
        let options = from_json(r#"{"format":"png"}"#);
        let mut tries = 0;
        loop {
            tries += 1;
            match JsFuture::from(chrome::tabs_capture_visible_tab(window, &options)).await {
                Ok(url) => return Ok(url.as_string().unwrap_or_default()),
                Err(e) => {
                    let why = error_text(&e);
                    if !over_capture_quota(&why) || tries >= CAPTURE_TRIES {
                        return Err(WireError::new(
                            ErrorCode::Internal,
                            format!("capturing the tab failed: {why}"),
                        ));
                    }
                    sleep(CAPTURE_RETRY_MS).await;
                }
            }
        }
    }

    /// The box of `shot`'s element in `tab`'s viewport, scrolled into view: found in its frame,
    /// then moved by where each frame it is in sits in its parent.
    async fn element_box(tab: TabId, shot: &Shot) -> Result<ElementBox, WireError> {
        let (frame, what) = shot_frame(shot);
        let args = match shot {
            Shot::Selector(selector) => json!([selector, null, null]),
            Shot::Ref { name, doc } => json!([null, name, doc]),
        };
        let found = in_frame(tab, frame, "elementBox", args).await?;
        let mut element = read_element_box(found, tab, &what)?.in_top();
        let mut at = frame;
        while at != 0 {
            let (parent, index) = frame_place(tab, at).await?;
            let found = in_frame(tab, parent, "frameBox", json!([index])).await?;
            let frame_box: FrameBox = serde_json::from_value(found).map_err(|_| {
                WireError::new(
                    ErrorCode::ElementNotFound,
                    format!("the frame of {what} is no longer in the page"),
                )
            })?;
            element = element.in_parent(&frame_box);
            at = parent;
        }
        Ok(element)
    }

    /// What `worker.js`'s helper `helper` answers, run with `args` in frame `frame` of `tab`
    /// (the content scripts' world, where that frame's runtime keeps its refs).
    async fn in_frame(
        tab: TabId,
        frame: FrameId,
        helper: &str,
        args: Value,
    ) -> Result<Value, WireError> {
        let injection = from_json(
            &json!({"target": {"tabId": tab, "frameIds": [frame]}, "args": args}).to_string(),
        );
        let func = get(&global_path(&["__tabwireBrowser"]), helper);
        let _ = js_sys::Reflect::set(&injection, &JsValue::from_str("func"), &func);
        let results = call(chrome::execute_script(&injection), "finding the element").await?;
        Ok(json_of(&results)
            .get(0)
            .and_then(|r| r.get("result"))
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// The frame `frame` of `tab` is in, and its place among that frame's children.
    async fn frame_place(tab: TabId, frame: FrameId) -> Result<(FrameId, u32), WireError> {
        let details = from_json(&json!({ "tabId": tab }).to_string());
        let listed = call(chrome::get_all_frames(&details), "listing the frames").await?;
        let frames: Vec<FrameInfo> = js_sys::Array::from(&listed)
            .iter()
            .filter_map(|f| crate::web::frames::frame_info(&f))
            .collect();
        i64::try_from(frame)
            .ok()
            .and_then(|frame| FrameRequest::place(&frames, frame))
            .and_then(|(parent, index)| Some((FrameId::try_from(parent).ok()?, index)))
            .ok_or_else(|| {
                WireError::new(
                    ErrorCode::ElementNotFound,
                    format!("frame {frame} is no longer in tab {tab}"),
                )
            })
    }

    async fn await_call(
        object: &JsValue,
        method: &str,
        args: &[JsValue],
    ) -> Result<JsValue, WireError> {
        let fail = |e: JsValue| {
            WireError::new(
                ErrorCode::Internal,
                format!("image {method}: {}", error_text(&e)),
            )
        };
        let promise = call_method(object, method, args).map_err(fail)?;
        JsFuture::from(js_sys::Promise::resolve(&promise))
            .await
            .map_err(fail)
    }

    async fn sleep(ms: f64) {
        let tick = js_sys::Promise::new(&mut |resolve, _| {
            chrome::set_timeout(&resolve, ms);
        });
        let _ = JsFuture::from(tick).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge::browser_ops::ImageFormat;

    fn capture() -> Capture {
        Capture {
            tab: 3,
            origin: "http://127.0.0.1:8000".into(),
            element: None,
            max_width: 1024,
            max_height: 1024,
            format: ImageFormat::Png,
        }
    }

    #[test]
    fn chrome_failures_get_their_codes() {
        assert_eq!(
            tab_failure("x", "No tab with id: 9.").code,
            ErrorCode::NoSuchTab
        );
        assert_eq!(
            tab_failure("back of tab 1", "Cannot find a next page in history.").code,
            ErrorCode::NoEffect
        );
        assert_eq!(tab_failure("x", "something else").code, ErrorCode::Internal);
        assert!(over_capture_quota(
            "This request exceeds the MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND quota."
        ));
    }

    #[test]
    fn the_tab_list_marks_the_focused_window_and_skips_odd_entries() {
        let tabs = [
            json!({"id": 1, "url": "https://a.example/", "title": "A", "active": true, "windowId": 7}),
            json!({"id": 2, "url": "https://b.example/", "active": false, "windowId": 8}),
            json!({"id": 3, "title": "no url (another extension's page)"}),
        ];
        let list = tab_list(&tabs, Some(7.0));
        assert_eq!(list.tabs.len(), 2);
        assert!(list.tabs[0].focused_window && list.tabs[0].active);
        assert!(!list.tabs[1].focused_window);
        assert_eq!(list.tabs[1].title, "");
        assert!(!tab_list(&tabs, None).tabs[0].focused_window);
    }

    #[test]
    fn pixels_of_another_document_than_the_allowed_one_are_dropped() {
        let frame = |id: &str, url: &str| serde_json::json!({"documentId": id, "url": url});
        let allowed = frame("D1", "http://127.0.0.1:8000/page.html");
        assert!(captured_the_same_document(&capture(), &allowed, &allowed, true).is_ok());
        let moved = frame("D2", "https://evil.example/");
        let error = captured_the_same_document(&capture(), &allowed, &moved, true).unwrap_err();
        assert_eq!(error.code, ErrorCode::Navigated);
        // Another document of the same origin, or another tab shown meanwhile: dropped too.
        let reloaded = frame("D2", "http://127.0.0.1:8000/page.html");
        let error = captured_the_same_document(&capture(), &allowed, &reloaded, true).unwrap_err();
        assert_eq!(error.code, ErrorCode::Navigated);
        let error = captured_the_same_document(&capture(), &allowed, &allowed, false).unwrap_err();
        assert_eq!(error.code, ErrorCode::Navigated);
        // A frame without a document id cannot be told apart: dropped.
        let unknown = serde_json::json!({"url": "http://127.0.0.1:8000/page.html"});
        assert!(captured_the_same_document(&capture(), &unknown, &unknown, true).is_err());
    }

    #[test]
    fn a_tab_that_moved_to_another_origin_is_not_captured() {
        assert!(check_origin(&capture(), "http://127.0.0.1:8000/page.html").is_ok());
        let moved = check_origin(&capture(), "https://evil.example/").unwrap_err();
        assert_eq!(moved.code, ErrorCode::Navigated);
        assert!(moved.message.contains("https://evil.example"), "{moved}");
        assert!(check_origin(&capture(), "chrome://newtab/").is_err());
    }

    #[test]
    fn the_pages_answer_about_an_element_becomes_its_box_or_a_typed_error() {
        let found = json!({"x": 1.0, "y": 2.0, "width": 3.0, "height": 4.0,
                           "viewport_width": 800.0, "viewport_height": 600.0, "within": []});
        assert_eq!(read_element_box(found, 3, "e4").unwrap().width, 3.0);
        let stale =
            json!({"stale": "e4 came from an earlier page of this tab: take a new snapshot"});
        let error = read_element_box(stale, 3, "e4").unwrap_err();
        assert_eq!(error.code, ErrorCode::StaleRef);
        assert!(
            error.message.starts_with("e4 came from an earlier page"),
            "{error}"
        );
        let invalid = json!("\"##\" is not a valid CSS selector");
        let error = read_element_box(invalid, 3, "\"##\"").unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidArgs);
        let error = read_element_box(Value::Null, 3, "\"#gone\"").unwrap_err();
        assert_eq!(error.code, ErrorCode::ElementNotFound);
        assert!(error.message.contains("\"#gone\" in tab 3"), "{error}");
        // A ref names its frame; a selector is the top document's.
        let shot = Shot::Ref {
            name: "f7e2".into(),
            doc: None,
        };
        assert_eq!(shot_frame(&shot), (7, "f7e2".into()));
        assert_eq!(shot_frame(&Shot::Selector("#a".into())).0, 0);
    }

    #[test]
    fn a_capture_is_planned_from_the_image_and_the_element() {
        let (region, size) = plan(&capture(), None, 1600, 1200).unwrap();
        assert_eq!((region.width, region.height), (1600, 1200));
        assert_eq!(size, (1024, 768));
        let hidden = ElementBox {
            x: 0.0,
            y: 900.0,
            width: 10.0,
            height: 10.0,
            viewport_width: 800.0,
            viewport_height: 600.0,
            within: Vec::new(),
        };
        let error = plan(&capture(), Some(&hidden), 800, 600).unwrap_err();
        assert_eq!(error.code, ErrorCode::NotActionable);
    }
}
