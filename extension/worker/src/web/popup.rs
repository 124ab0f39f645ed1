//! The popup's requests in the browser: each is read ([`crate::popup::decode`]), checked
//! against what its tab shows now (Chrome's `tabs.get`), decided by the [`Core`](crate::core::Core)
//! and answered through the popup's `sendResponse`; a request the server makes (a grant change,
//! a save) is answered when the server says, or after [`POPUP_ANSWER_MS`] that it did not. The
//! glue gives the function that carries out the decisions' actions (so this module needs none of
//! it).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use bridge::protocol::TabId;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::chrome::{self, error_text, get};
use super::state::with_core;
use crate::core::Action;
use crate::popup::{AgentControl, Answered, HandoffAnswer, Request, ShareTab};
use bridge::ToServer;

thread_local! {
    /// The popup's requests waiting for the server's answer: each one's `sendResponse`.
    static WAITING: RefCell<HashMap<String, js_sys::Function>> = RefCell::new(HashMap::new());
    static SERIAL: Cell<u64> = const { Cell::new(0) };
}

/// How long the popup waits for the server to make its change or save its recording.
const POPUP_ANSWER_MS: f64 = 5000.0;

/// The popup's request (its message's text), answered through `respond` (its `sendResponse`);
/// `run` carries out the actions decided.
pub async fn request(text: Option<String>, respond: js_sys::Function, run: fn(Vec<Action>)) {
    let request = match crate::popup::decode(text.as_deref()) {
        Ok(request) => request,
        Err(why) => return respond_with(&respond, &Err(why)),
    };
    let id = format!("popup-{}", SERIAL.replace(SERIAL.get() + 1));
    let decided = match request {
        Request::ChangeGrant(request) => {
            let tab_url = match request.tab {
                Some(tab) => match tab_url(tab).await {
                    Ok(url) => Some(url),
                    Err(why) => return respond_with(&respond, &Err(why)),
                },
                None => None,
            };
            if let Err(why) = request.change.check(tab_url.as_deref()) {
                return respond_with(&respond, &Err(why));
            }
            with_core(|core| core.change_grant(id.clone(), request.change, request.tab))
        }
        Request::Record(request) => {
            let url = match tab_url(request.tab).await {
                Ok(url) => url,
                Err(why) => return respond_with(&respond, &Err(why)),
            };
            let made = with_core(|core| core.record(request.tab, &url, request.action));
            let answer = made.map(|actions| {
                run(actions);
                Answered::Recording
            });
            return respond_with(&respond, &answer);
        }
        Request::SaveRecording(request) => {
            with_core(|core| core.save_recording(id.clone(), request.tab, request.tool))
        }
        Request::HandoffAnswer(HandoffAnswer { handoff, done }) => {
            super::handoff::person_said(&handoff, done);
            return respond_with(&respond, &Ok(Answered::Sent));
        }
        Request::AgentControl(AgentControl { agent, stop }) => {
            let request = ToServer::AgentControl { agent, stop };
            return sent(&respond, with_core(|core| core.agent_request(request)), run);
        }
        Request::ShareTab(ShareTab { tab }) => {
            let request = ToServer::ShareTab { tab };
            return sent(&respond, with_core(|core| core.agent_request(request)), run);
        }
    };
    match decided {
        Ok(actions) => wait_for_server(id, respond, actions, run),
        Err(why) => respond_with(&respond, &Err(why)),
    }
}

/// Carries out an agent request's `actions` (its frame to the server) and answers the popup.
fn sent(respond: &js_sys::Function, actions: Result<Vec<Action>, String>, run: fn(Vec<Action>)) {
    let answer = actions.map(|actions| {
        run(actions);
        Answered::Sent
    });
    respond_with(respond, &answer);
}

/// What `tab` shows now, or the sentence saying it is gone.
async fn tab_url(tab: TabId) -> Result<String, String> {
    match JsFuture::from(chrome::tabs_get(tab as f64)).await {
        Ok(shown) => Ok(get(&shown, "url").as_string().unwrap_or_default()),
        Err(e) => Err(format!("tab {tab} is gone: {}", error_text(&e))),
    }
}

/// Sends request `id` to the server (`actions`) and answers the popup when it answers.
fn wait_for_server(
    id: String,
    respond: js_sys::Function,
    actions: Vec<Action>,
    run: fn(Vec<Action>),
) {
    WAITING.with(|w| w.borrow_mut().insert(id.clone(), respond));
    let give_up = Closure::once_into_js(move || {
        let why = format!("tabwire did not answer within {POPUP_ANSWER_MS} ms");
        answer(&id, &Err(why));
    });
    chrome::set_timeout(give_up.unchecked_ref(), POPUP_ANSWER_MS);
    run(actions);
}

fn respond_with(respond: &js_sys::Function, answer: &Result<Answered, String>) {
    let text = JsValue::from_str(&crate::popup::answer_text(answer));
    let _ = respond.call1(&JsValue::NULL, &text);
}

/// Gives the popup waiting on `id` its answer (once: a late one is dropped).
pub fn answer(id: &str, answer: &Result<Answered, String>) {
    if let Some(respond) = WAITING.with(|w| w.borrow_mut().remove(id)) {
        respond_with(&respond, answer);
    }
}
