//! A hand-off's window in the browser (issue 28's `browser_handoff`): the tab is brought to the
//! front, and `extension/handoff.html` opens in a small window of its own with the agent's message
//! (kept in `chrome.storage.session`, which pages cannot read), so the site can neither read the
//! message nor draw a fake one. The person's Done or Cancel comes back as a popup-family request
//! ([`person_said`]); the server long-polls it ([`answer`]) and closes the window when the
//! hand-off is over ([`end`]). A window the person closed counts as Cancel.

use std::cell::RefCell;
use std::collections::HashMap;

use bridge::handoff::{HandoffAnswer, HandoffShown, MAX_ANSWER_WAIT_MS, PersonSaid, ShowHandoff};
use bridge::{ErrorCode, WireError};
use wasm_bindgen_futures::JsFuture;

use super::chrome::{self, error_text, from_json, get};
use super::state::sleep;

/// How often a waiting answer looks again.
const POLL_MS: f64 = 100.0;
/// How often it checks that the window is still open.
const WINDOW_CHECK_EVERY: u32 = 10;

struct Shown {
    window: f64,
    said: PersonSaid,
}

thread_local! {
    static HANDOFFS: RefCell<HashMap<String, Shown>> = RefCell::new(HashMap::new());
}

/// Brings the tab to the front and opens the hand-off's window.
pub async fn show(show: ShowHandoff) -> Result<HandoffShown, WireError> {
    let failed = |what: &str, e: &wasm_bindgen::JsValue| {
        WireError::new(
            ErrorCode::TabClosed,
            format!("{what} for the hand-off: {}", error_text(e)),
        )
    };
    let tab = show.tab as f64;
    let shown = JsFuture::from(chrome::tabs_update(tab, &from_json(r#"{"active":true}"#)))
        .await
        .map_err(|e| failed(&format!("bringing tab {} to the front", show.tab), &e))?;
    if let Some(window) = get(&shown, "windowId").as_f64() {
        let _ = JsFuture::from(chrome::windows_update(
            window,
            &from_json(r#"{"focused":true}"#),
        ))
        .await;
    }
    let url = get(&shown, "url").as_string().unwrap_or_default();
    let key = format!("handoff:{}", show.handoff);
    let item = serde_json::json!({ key: {"message": show.message, "tab": show.tab, "url": url} });
    JsFuture::from(chrome::session_set(&from_json(&item.to_string())))
        .await
        .map_err(|e| failed("keeping the message", &e))?;
    let page = chrome::runtime_get_url(&format!(
        "{}?h={}",
        crate::popup::HANDOFF_PAGE,
        show.handoff
    ));
    let options = serde_json::json!({
        "url": page, "type": "popup", "width": 460, "height": 320, "focused": true,
    });
    let window = JsFuture::from(chrome::windows_create(&from_json(&options.to_string())))
        .await
        .map_err(|e| failed("opening Tabwire's window", &e))?;
    let window = get(&window, "id").as_f64().unwrap_or(-1.0);
    HANDOFFS.with(|h| {
        h.borrow_mut().insert(
            show.handoff,
            Shown {
                window,
                said: PersonSaid::Nothing,
            },
        )
    });
    Ok(HandoffShown {
        window: window.max(0.0) as u64,
    })
}

/// The person's word on hand-off `handoff` from its window.
pub fn person_said(handoff: &str, done: bool) {
    HANDOFFS.with(|h| {
        if let Some(shown) = h.borrow_mut().get_mut(handoff) {
            shown.said = match done {
                true => PersonSaid::Done,
                false => PersonSaid::Cancel,
            };
        }
    });
}

/// What the person said on `handoff`, waiting up to `wait_ms` for it (an unknown hand-off, or
/// a window gone, is a Cancel).
pub async fn answer(handoff: &str, wait_ms: u64) -> HandoffAnswer {
    let polls = (wait_ms.min(MAX_ANSWER_WAIT_MS) as f64 / POLL_MS).ceil() as u32;
    for poll in 0..=polls {
        let said = HANDOFFS.with(|h| h.borrow().get(handoff).map(|s| (s.said, s.window)));
        let Some((said, window)) = said else {
            return HandoffAnswer {
                said: PersonSaid::Cancel,
            };
        };
        if said != PersonSaid::Nothing {
            return HandoffAnswer { said };
        }
        if poll % WINDOW_CHECK_EVERY == 0
            && JsFuture::from(chrome::windows_get(window)).await.is_err()
        {
            person_said(handoff, false);
            continue;
        }
        if poll < polls {
            sleep(POLL_MS).await;
        }
    }
    HandoffAnswer {
        said: PersonSaid::Nothing,
    }
}

/// Hand-off `handoff` is over: its window closes and its message is forgotten.
pub async fn end(handoff: &str) {
    let shown = HANDOFFS.with(|h| h.borrow_mut().remove(handoff));
    if let Some(shown) = shown {
        // Closed by the person already: nothing to do.
        let _ = JsFuture::from(chrome::windows_remove(shown.window)).await;
    }
    let _ = JsFuture::from(chrome::session_remove(&format!("handoff:{handoff}"))).await;
}
