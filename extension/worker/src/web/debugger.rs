//! Trusted input's browser side: `chrome.debugger` attached to a tab on its first trusted input,
//! kept attached while it is used, detached after [`IDLE_MS`] without use; the page's `Input`
//! commands sent in order. What went wrong is said as a typed error: another debugger on the tab,
//! the user cancelling Chrome's debugging bar, the tab closing. The commands are decided in the
//! page (`bridge::trusted_input`); [`crate::core`] checked the call and the methods.

use std::cell::RefCell;
use std::collections::HashMap;

use bridge::page::TrustedInputAnswer;
use bridge::trusted_input::Command;
use bridge::{ErrorCode, TabId, WireError};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::chrome::{self, error_text, from_json, global_path};

/// How long a tab stays attached after its last trusted input (Chrome's bar shows meanwhile).
pub const IDLE_MS: f64 = 10_000.0;

/// The DevTools protocol version asked for.
const PROTOCOL_VERSION: &str = "1.3";

thread_local! {
    /// Attached tabs and when each was last used (`Date.now()`).
    static ATTACHED: RefCell<HashMap<TabId, f64>> = RefCell::new(HashMap::new());
    /// Why Chrome detached a tab we had attached (`chrome.debugger.onDetach`'s reason), until
    /// the next attach: what a failing command is explained by.
    static DETACHED: RefCell<HashMap<TabId, String>> = RefCell::new(HashMap::new());
}

fn debugger() -> JsValue {
    global_path(&["chrome", "debugger"])
}

fn target(tab: TabId) -> JsValue {
    from_json(&format!(r#"{{"tabId":{tab}}}"#))
}

/// Calls `chrome.debugger[method](...args)` now; its promise.
fn start(method: &str, args: &[JsValue]) -> Result<js_sys::Promise, String> {
    chrome::call_method(&debugger(), method, args)
        .map(JsCast::unchecked_into)
        .map_err(|e| error_text(&e))
}

async fn call(method: &str, args: &[JsValue]) -> Result<JsValue, String> {
    JsFuture::from(start(method, args)?)
        .await
        .map_err(|e| error_text(&e))
}

/// Performs `commands` in `tab`; the page's answer (JSON of [`TrustedInputAnswer`]).
pub async fn perform(tab: TabId, commands: Vec<Command>) -> String {
    let error = run(tab, &commands).await.err();
    ATTACHED.with(|a| {
        if let Some(used) = a.borrow_mut().get_mut(&tab) {
            *used = js_sys::Date::now();
        }
    });
    schedule_idle_detach(tab);
    serde_json::to_string(&TrustedInputAnswer { error }).expect("answers serialize")
}

async fn run(tab: TabId, commands: &[Command]) -> Result<(), WireError> {
    super::engine::engine().trusted_input()?;
    if !ATTACHED.with(|a| a.borrow().contains_key(&tab)) {
        let version = JsValue::from_str(PROTOCOL_VERSION);
        call("attach", &[target(tab), version])
            .await
            .map_err(|why| attach_failed(tab, &why))?;
        DETACHED.with(|d| d.borrow_mut().remove(&tab));
        ATTACHED.with(|a| a.borrow_mut().insert(tab, js_sys::Date::now()));
    }
    // Each run of commands of one method is sent at once: the browser queues a method's input
    // events in order, and an input event waits for the page's next frame, so awaiting each
    // before sending the next costs a frame apiece (BENCHMARKS.md). Another method (keys, then
    // `insertText`) waits for the run before it, whose events it must come after.
    for run in commands.chunk_by(|a, b| a.method == b.method) {
        if let Err(why) = send_all(tab, run).await {
            ATTACHED.with(|a| a.borrow_mut().remove(&tab));
            let reason = DETACHED.with(|d| d.borrow().get(&tab).cloned());
            return Err(command_failed(tab, &why, reason.as_deref()));
        }
    }
    Ok(())
}

/// Sends `commands` at once and waits for every answer; the first failure.
async fn send_all(tab: TabId, commands: &[Command]) -> Result<(), String> {
    let sent: Vec<Result<js_sys::Promise, String>> = commands
        .iter()
        .map(|command| {
            let params = from_json(&command.params.to_string());
            let method = JsValue::from_str(&command.method);
            start("sendCommand", &[target(tab), method, params])
        })
        .collect();
    let mut failed = Ok(());
    for promise in sent {
        let outcome = match promise {
            Ok(promise) => JsFuture::from(promise)
                .await
                .map(drop)
                .map_err(|e| error_text(&e)),
            Err(why) => Err(why),
        };
        failed = failed.and(outcome);
    }
    failed
}

/// The tab trusted input was for is gone.
fn tab_was_closed(tab: TabId) -> WireError {
    WireError::new(ErrorCode::TabClosed, format!("tab {tab} was closed"))
}

/// Chrome refused to attach (`why`: its message).
fn attach_failed(tab: TabId, why: &str) -> WireError {
    if why.contains("No tab with") {
        return tab_was_closed(tab);
    }
    if why.contains("Another debugger") {
        return WireError::new(
            ErrorCode::DebuggerUnavailable,
            format!(
                "trusted input needs Chrome's debugger, and another one is attached to tab {tab} \
                 (DevTools open on it, or another extension): close it and call again, or turn \
                 trusted input off for the site (`tabwire revoke --trusted-input ORIGIN`)"
            ),
        );
    }
    WireError::new(
        ErrorCode::DebuggerUnavailable,
        format!("Chrome did not let trusted input attach its debugger to tab {tab}: {why}"),
    )
}

/// A command failed (`why`: Chrome's message); `reason`: why Chrome detached the tab, if it did.
fn command_failed(tab: TabId, why: &str, reason: Option<&str>) -> WireError {
    match reason {
        Some("target_closed") => tab_was_closed(tab),
        _ if why.contains("No tab with") => tab_was_closed(tab),
        Some("canceled_by_user") => WireError::new(
            ErrorCode::DebuggerUnavailable,
            format!(
                "the user cancelled Chrome's \"Tabwire started debugging this browser\" bar, which \
                 stopped trusted input in tab {tab} before the action was done: call again to \
                 attach again (the bar shows again), or turn trusted input off for the site \
                 (`tabwire revoke --trusted-input ORIGIN`)"
            ),
        ),
        _ => WireError::new(
            ErrorCode::DebuggerUnavailable,
            format!(
                "Chrome's debugger was detached from tab {tab} during the action (the debugging \
                 bar was cancelled, or another debugger took the tab): {why}. Call again to \
                 attach again"
            ),
        ),
    }
}

/// Detaches `tab` once it has not been used for [`IDLE_MS`].
fn schedule_idle_detach(tab: TabId) {
    let check = Closure::once_into_js(move || {
        let idle = ATTACHED.with(|a| {
            a.borrow()
                .get(&tab)
                .is_some_and(|used| js_sys::Date::now() - used >= IDLE_MS)
        });
        if idle {
            ATTACHED.with(|a| a.borrow_mut().remove(&tab));
            wasm_bindgen_futures::spawn_local(async move {
                let _ = call("detach", &[target(tab)]).await;
            });
        }
    });
    chrome::set_timeout(check.unchecked_ref(), IDLE_MS + 50.0);
}

/// `chrome.debugger.onDetach`: Chrome detached `tab` (`reason`: `target_closed`,
/// `canceled_by_user`).
pub fn detached(tab: TabId, reason: String) {
    ATTACHED.with(|a| a.borrow_mut().remove(&tab));
    DETACHED.with(|d| d.borrow_mut().insert(tab, reason));
}

/// The tab closed: nothing is attached to it any more (Chrome detached it).
pub fn tab_removed(tab: TabId) {
    ATTACHED.with(|a| a.borrow_mut().remove(&tab));
    DETACHED.with(|d| d.borrow_mut().remove(&tab));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_went_wrong_is_said_with_what_to_do() {
        let other = attach_failed(
            7,
            "Another debugger is already attached to the tab with id: 7.",
        );
        assert_eq!(other.code, ErrorCode::DebuggerUnavailable);
        assert!(other.message.contains("DevTools") && other.message.contains("revoke"));
        assert_eq!(
            attach_failed(7, "No tab with given id 7.").code,
            ErrorCode::TabClosed
        );
        let other = attach_failed(7, "Cannot access a chrome:// URL");
        assert!(
            other.message.ends_with("Cannot access a chrome:// URL"),
            "{other:?}"
        );

        let cancelled = command_failed(
            7,
            "Detached while handling command.",
            Some("canceled_by_user"),
        );
        assert_eq!(cancelled.code, ErrorCode::DebuggerUnavailable);
        assert!(
            cancelled.message.contains("cancelled Chrome's"),
            "{cancelled:?}"
        );
        let closed = command_failed(7, "Detached while handling command.", Some("target_closed"));
        assert_eq!(closed.code, ErrorCode::TabClosed);
        let taken = command_failed(7, "Debugger is not attached to the tab with id: 7.", None);
        assert_eq!(taken.code, ErrorCode::DebuggerUnavailable);
        assert!(taken.message.contains("detached") && taken.message.contains("Call again"));
    }
}
