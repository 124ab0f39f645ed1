//! What the worker does with what pages say and with what happens to tabs: the answers to the
//! requests it sent them (a call's result passed on as the page wrote it, a navigating call's
//! continuation kept for the next page), the messages they send unasked (`page_ready`,
//! `tools_updated`, `state_update`), and tabs closing, navigating and gaining focus. Part of
//! [`Core`], which it extends; host-tested with it.

use bridge::page::{CallAnswer, FromPage, ToPage};
use bridge::page_ops::FrameId;
use bridge::protocol::{LoadedPage, RequestId, TabId};
use bridge::{ErrorCode, ToServer, WireError};

use super::navigation::{Continuation, origin};

/// The longest frame dialog report passed on: the shim's report of a dialog (its message cut
/// to `bridge::dialog::MAX_MESSAGE_CHARS` by the page runtime) fits many times over.
const MAX_FRAME_DIALOG_BYTES: usize = 16 * 1024;
use super::{Action, Core, LinkState, MAX_RESULT_BYTES, OnReply};
use crate::tabs::{self, Sender};

/// A [`FromPage::FrameSnapshot`] from frame `parent` of `tab`: its answer is awaited at most
/// `timeout_ms`.
#[derive(Debug, PartialEq)]
pub struct FrameRequest {
    pub tab: TabId,
    pub parent: i64,
    pub src: String,
    pub nth: u32,
    pub index: u32,
    /// What the frame runs (a whole snapshot, as the asking runtime encoded it).
    pub op: bridge::page_ops::WireOp,
    pub timeout_ms: u64,
}

/// A frame of a tab as `webNavigation.getAllFrames` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameInfo {
    pub frame: i64,
    pub parent: i64,
    pub url: String,
}

impl FrameRequest {
    /// The frame asked for among the tab's `frames`: the `nth` child of the asking frame that
    /// shows `src`, or, when none does (the frame went to another page by itself), the child at
    /// `index` (Chrome lists a frame's children in the document's order).
    pub fn pick(&self, frames: &[FrameInfo]) -> Option<FrameId> {
        let children = || {
            frames
                .iter()
                .filter(|f| f.parent == self.parent && f.frame != self.parent)
        };
        let found = children()
            .filter(|f| f.url == self.src)
            .nth(self.nth as usize)
            .or_else(|| children().nth(self.index as usize))?;
        FrameId::try_from(found.frame).ok().filter(|&f| f != 0)
    }

    /// Where frame `frame` is among the tab's `frames`: its parent, and its place among that
    /// parent's children (the document's `window.frames` order, as Chrome lists them).
    pub fn place(frames: &[FrameInfo], frame: i64) -> Option<(i64, u32)> {
        let parent = frames.iter().find(|f| f.frame == frame)?.parent;
        let index = frames
            .iter()
            .filter(|f| f.parent == parent && f.frame != parent)
            .position(|f| f.frame == frame)?;
        Some((parent, u32::try_from(index).ok()?))
    }

    /// The page op to send frame `frame`'s runtime: a whole snapshot, its refs named with `frame`.
    pub fn message(&self, frame: FrameId) -> String {
        let message = ToPage::PageOp {
            id: format!("frame-{frame}"),
            tab: self.tab,
            call: bridge::page::PageCall {
                op: self.op.clone(),
                frame,
                doc: None,
                origin: None,
                timeout_ms: self.timeout_ms,
                trusted_input: false,
                files: Vec::new(),
            },
        };
        serde_json::to_string(&message).expect("page messages serialize")
    }
}

impl Core {
    // ---- answers from tabs ---------------------------------------------------------------

    /// The page answered `call_tool` `id` (`Ok`: the response, possibly `None` when the page
    /// gave none) or `chrome.tabs.sendMessage` failed (`Err`: Chrome's message).
    pub fn on_call_reply(
        &mut self,
        id: &str,
        reply: Result<Option<String>, String>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        let Some(tab) = self.calls.remove(id) else {
            return actions; // already answered (the tab closed meanwhile)
        };
        let trusted_input = self.trusted_calls.remove(id);
        let files = self.call_files.remove(id).unwrap_or_default();
        // A continued call whose step acted: whatever it answers comes after that action.
        let acted = self.nav.acted.remove(id);
        // Issue 26: a page tool's result that comes after the tab went to another origin is
        // dropped, not passed on labelled with the origin the tab no longer shows.
        if let Some(error) = self.moved_away(id, tab)
            && let Ok(Some(text)) = &reply
            && matches!(CallAnswer::read(text, id), Ok(CallAnswer::Result))
        {
            self.call_done(id);
            let id = id.to_owned();
            self.send(ToServer::CallToolError { id, error }, &mut actions);
            return actions;
        }
        let msg = match reply {
            Ok(Some(text)) => match CallAnswer::read(&text, id) {
                Ok(CallAnswer::Message(FromPage::CallToolContinue {
                    id: got,
                    tool,
                    resume_at,
                    vars,
                    timeout_ms,
                    step,
                    acted: this_acted,
                })) if got == id => {
                    // Still pending: a closed tab or a page without the tool fails it.
                    self.call_done(id);
                    let rest = ToPage::ContinueTool {
                        id: got.clone(),
                        tool: tool.clone(),
                        resume_at,
                        vars,
                        timeout_ms,
                        trusted_input,
                        files: files.clone(),
                    };
                    if trusted_input {
                        self.trusted_calls.insert(got.clone());
                    }
                    if !files.is_empty() {
                        self.call_files.insert(got.clone(), files);
                    }
                    let from = origin(self.tabs.get(tab).map_or("", |t| t.url.as_str()));
                    let continuation = Continuation {
                        id: got,
                        tool,
                        rest,
                        step,
                        acted: acted || this_acted,
                        from,
                    };
                    self.continue_in_next_page(tab, continuation, timeout_ms, &mut actions);
                    return actions;
                }
                Ok(CallAnswer::Message(FromPage::CallToolLanding {
                    id: got,
                    result,
                    step,
                    url,
                    timeout_ms,
                })) if got == id => {
                    self.answer_once_landed(got, tab, result, step, url, timeout_ms, &mut actions);
                    return actions;
                }
                // Forwarded, it would be a frame the server must refuse (closing the socket and
                // every other call on it): fail this call alone.
                _ if text.len() > MAX_RESULT_BYTES => ToServer::CallToolError {
                    id: id.to_owned(),
                    error: WireError::new(
                        ErrorCode::TooLarge,
                        format!(
                            "tab {tab} answered with {} bytes, more than the {MAX_RESULT_BYTES} a result may have",
                            text.len()
                        ),
                    ),
                },
                // The page wrote the very frame the server reads: passed on as it is.
                Ok(CallAnswer::Result) if self.link == LinkState::Connected => {
                    self.call_done(id);
                    actions.push(Action::Frame(text));
                    return actions;
                }
                // The outbox keeps messages, not frames: queued, the result is decoded after all.
                Ok(CallAnswer::Result) => match serde_json::from_str::<FromPage>(&text) {
                    Ok(FromPage::CallToolResult { result, .. }) => ToServer::CallToolResult {
                        id: id.to_owned(),
                        result,
                        navigated: None,
                    },
                    // `read` found a result; decoded, it is one all the same.
                    other => something_else(tab, id, other.err()),
                },
                Ok(CallAnswer::Message(FromPage::CallToolError { id: got, error }))
                    if got == id =>
                {
                    ToServer::CallToolError {
                        id: id.to_owned(),
                        error,
                    }
                }
                other => something_else(tab, id, other.err()),
            },
            Ok(None) => ToServer::CallToolError {
                id: id.to_owned(),
                error: no_runtime(tab),
            },
            Err(why) => {
                // Sent to a page that was already leaving: it runs in the next one instead.
                if channel_closed(&why) && self.sent_into_leaving_page(id, tab, &mut actions) {
                    return actions;
                }
                let error = classify_send_failure(tab, &why, self.tabs.contains(tab));
                // The page went away while the call ran: it may be what the call did.
                let error = if channel_closed(&why) {
                    error.maybe_performed()
                } else {
                    error
                };
                ToServer::CallToolError {
                    id: id.to_owned(),
                    error,
                }
            }
        };
        self.call_done(id);
        let msg = match msg {
            ToServer::CallToolError { id, error } if acted => ToServer::CallToolError {
                id,
                error: error.maybe_performed(),
            },
            other => other,
        };
        self.send(msg, &mut actions);
        actions
    }

    /// The page answered `request_state` `id`, or `chrome.tabs.sendMessage` to `tab` failed.
    pub fn on_state_reply(
        &mut self,
        id: &str,
        tab: TabId,
        reply: Result<Option<String>, String>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        let moved_away = self.moved_away(id, tab);
        let id = id.to_owned();
        let msg = match reply.map(|text| text.map(|t| serde_json::from_str::<FromPage>(&t))) {
            Ok(Some(Ok(FromPage::StateResponse { id: got, .. })))
                if got == id
                    && let Some(error) = moved_away =>
            {
                ToServer::StateError { id, error }
            }
            Ok(Some(Ok(FromPage::StateResponse { id: got, state }))) if got == id => {
                ToServer::StateResponse { id, state }
            }
            Ok(Some(Ok(FromPage::StateError { id: got, error }))) if got == id => {
                ToServer::StateError { id, error }
            }
            Ok(None) => ToServer::StateError {
                id,
                error: WireError::new(
                    ErrorCode::NoSuchTab,
                    format!("tab {tab} has no Tabwire runtime to answer"),
                ),
            },
            Ok(_) => ToServer::StateError {
                id,
                error: WireError::new(
                    ErrorCode::Internal,
                    format!("tab {tab} answered the state request with something else"),
                ),
            },
            Err(why) => ToServer::StateError {
                error: classify_send_failure(tab, &why, self.tabs.contains(tab)),
                id,
            },
        };
        self.send(msg, &mut actions);
        actions
    }

    /// The tab `open_tab` `id` opened (with what was seen once its page loaded, when asked to
    /// wait for that), or why it could not.
    pub fn on_open_tab_reply(
        &mut self,
        id: &str,
        reply: Result<TabId, String>,
        loaded: Option<LoadedPage>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        let msg = match reply {
            Ok(tab) => ToServer::OpenTabResult {
                id: id.to_owned(),
                tab,
                loaded,
            },
            Err(why) => {
                let code = if why.contains("No tab with id") {
                    ErrorCode::NoSuchTab
                } else {
                    ErrorCode::Internal
                };
                ToServer::OpenTabError {
                    id: id.to_owned(),
                    error: WireError::new(code, format!("could not open the URL: {why}")),
                }
            }
        };
        self.send(msg, &mut actions);
        actions
    }

    // ---- messages from pages -------------------------------------------------------------

    /// A runtime's request for a child frame's part of its snapshot
    /// ([`FromPage::FrameSnapshot`]), from any frame of a tab (frames nest), or `None` when
    /// `text` is not such a request from our runtime in a tab (then it is an ordinary message,
    /// for [`Core::on_page_message`]).
    pub fn frame_request(&self, sender: &Sender, text: Option<&str>) -> Option<FrameRequest> {
        let text = text.filter(|t| t.starts_with(r#"{"type":"frame_snapshot""#))?;
        if sender.extension_id.as_deref() != Some(self.extension_id.as_str()) {
            return None;
        }
        let (tab, parent) = (sender.tab?, sender.frame_id?);
        let Ok(FromPage::FrameSnapshot {
            src,
            nth,
            index,
            op,
            timeout_ms,
        }) = serde_json::from_str(text)
        else {
            return None;
        };
        Some(FrameRequest {
            tab,
            parent,
            src,
            nth,
            index,
            op,
            timeout_ms: timeout_ms.min(bridge::page_ops::FRAME_ANSWER_MS),
        })
    }

    /// A dialog a cross-origin child frame answered itself ([`FromPage::FrameDialog`], from our
    /// relay in a frame of a tab), given to the runtime of the tab's top frame while a call runs
    /// in the tab, named with the frame's origin as Chrome gives the sender (the page's claim is
    /// not used); `None` when `text` is not such a report.
    pub fn frame_dialog(&self, sender: &Sender, text: Option<&str>) -> Option<Action> {
        let text = text.filter(|t| t.starts_with(r#"{"type":"frame_dialog""#))?;
        if sender.extension_id.as_deref() != Some(self.extension_id.as_str())
            || text.len() > MAX_FRAME_DIALOG_BYTES
        {
            return None;
        }
        let tab = sender
            .tab
            .filter(|_| sender.frame_id.is_some_and(|f| f != 0))?;
        let Ok(FromPage::FrameDialog { report }) = serde_json::from_str(text) else {
            return None;
        };
        // No call there: nothing to tell (the shim answered the dialog already).
        if !self.calls.values().any(|&t| t == tab) {
            return None;
        }
        let message = ToPage::FrameDialog {
            report,
            origin: origin(&sender.url),
        };
        Some(Action::ToTab {
            tab,
            message: serde_json::to_string(&message).expect("page messages serialize"),
            on_reply: OnReply::Nothing,
        })
    }

    /// A `runtime.onMessage` message; returns the response to give (if any) and the actions.
    pub fn on_page_message(
        &mut self,
        sender: &Sender,
        text: Option<&str>,
    ) -> (Option<String>, Vec<Action>) {
        let mut actions = Vec::new();
        let tab = match tabs::check_sender(sender, &self.extension_id) {
            Ok(tab) => tab,
            Err(why) => {
                actions.push(Action::Log(format!("ignored a message {why}")));
                return (None, actions);
            }
        };
        let Some(text) = text.filter(|t| t.len() <= bridge::MAX_MESSAGE_BYTES) else {
            actions.push(Action::Log(format!(
                "ignored a non-text or oversized message from tab {tab}"
            )));
            return (None, actions);
        };
        let msg = match serde_json::from_str::<FromPage>(text) {
            Ok(msg) => msg,
            Err(e) => {
                actions.push(Action::Log(format!(
                    "ignored an undecodable message from tab {tab}: {e}"
                )));
                return (None, actions);
            }
        };
        // Chrome's idea of the page's URL, not the page's own claim.
        let url = sender.url.as_str();
        match msg {
            FromPage::PageReady { title, runtime, .. } => {
                self.tabs.page_ready(tab, url, &title, runtime);
                self.tabs_changed(&mut actions);
                self.record_in_new_page(tab, url, &mut actions);
                (Some(self.adapters_message(url)), actions)
            }
            FromPage::ToolsUpdated { title, tools, .. } => {
                let (accepted, refused) = tabs::accept_tools(&self.adapters, url, &tools);
                if refused > 0 {
                    actions.push(Action::Log(format!(
                        "tab {tab} offered {refused} tool(s) no adapter for {url} defines: dropped"
                    )));
                }
                // Only the next page's runtime continues a call (the old one may still announce).
                let next_page = !self.is_loading(tab) || self.load_committed(tab);
                let continuing = self.nav.continuations.remove(&tab).map(|c| {
                    let offered = accepted.iter().any(|t| t.name() == c.tool);
                    (c, offered)
                });
                let update = self.tabs.set_tools(tab, url, &title, accepted);
                self.send(ToServer::ToolsUpdated(update), &mut actions);
                match continuing {
                    Some((c, _)) if !next_page => {
                        self.nav.continuations.insert(tab, c);
                    }
                    Some((c, true)) => {
                        if c.acted {
                            self.nav.acted.insert(c.id.clone());
                        }
                        actions.push(Action::ToTab {
                            tab,
                            message: serde_json::to_string(&c.rest)
                                .expect("page messages serialize"),
                            on_reply: OnReply::CallTool(c.id),
                        });
                    }
                    Some((c, false)) => {
                        let error = WireError::new(
                            ErrorCode::Navigated,
                            format!(
                                "{}: tab {tab} went on to {url}, whose page offers no tool {:?} to continue the call",
                                c.step, c.tool
                            ),
                        );
                        self.fail_continued(c, error, &mut actions);
                    }
                    None => {}
                }
                self.page_announced(tab, &mut actions);
                self.tabs_changed(&mut actions);
                (None, actions)
            }
            FromPage::Recorded { step } => {
                // Only the top frame records (a frame's page is another document, maybe another
                // site); `check_sender` let only frame 0 through.
                actions.extend(self.on_recorded(tab, url, step));
                (None, actions)
            }
            // Issue 26: a state the page of the origin the tab left took (sent as it was leaving)
            // is not the tab's.
            FromPage::StateUpdate { .. } if self.left_origin(tab, &sender.url) => {
                let from = origin(&sender.url);
                actions.push(Action::Log(format!(
                    "dropped a state update of {from}: tab {tab} shows another origin now"
                )));
                (None, actions)
            }
            FromPage::StateUpdate { state, ts } => {
                self.send(ToServer::StateUpdate { tab, state, ts }, &mut actions);
                (None, actions)
            }
            FromPage::DialogShown { open: true } => {
                self.dialogs_open.insert(tab);
                self.fail_calls_in(tab, &bridge::dialog::open_in_tab(tab), &mut actions);
                (None, actions)
            }
            FromPage::DialogShown { open: false } => {
                self.dialogs_open.remove(&tab);
                (None, actions)
            }
            FromPage::TrustedInput { call, commands } => {
                // Only a running call of this very tab that the server sent as trusted, and only
                // input: a page cannot use the debugger for anything else.
                let refusal = if self.calls.get(&call) != Some(&tab) {
                    Some(format!("call {call:?} is not running in tab {tab}"))
                } else if !self.trusted_calls.contains(&call) {
                    Some(format!("call {call:?} was not sent with trusted input"))
                } else {
                    commands
                        .iter()
                        .find(|c| !c.is_input())
                        .map(|c| format!("{:?} is not an input command", c.method))
                };
                match refusal {
                    Some(why) => {
                        actions.push(Action::Log(format!(
                            "refused trusted input from tab {tab}: {why}"
                        )));
                        let answer = bridge::page::TrustedInputAnswer {
                            error: Some(WireError::new(
                                ErrorCode::Protocol,
                                format!("trusted input refused: {why}"),
                            )),
                        };
                        let text = serde_json::to_string(&answer).expect("answers serialize");
                        (Some(text), actions)
                    }
                    None => {
                        actions.push(Action::TrustedInput { tab, commands });
                        (None, actions)
                    }
                }
            }
            FromPage::CallToolResult { .. }
            | FromPage::CallToolError { .. }
            | FromPage::StateResponse { .. }
            | FromPage::StateError { .. }
            | FromPage::CallToolContinue { .. }
            | FromPage::CallToolLanding { .. } => {
                actions.push(Action::Log(format!(
                    "tab {tab} sent a call answer outside its response channel: ignored"
                )));
                (None, actions)
            }
            // A top frame reports its own dialogs to its own runtime.
            FromPage::FrameDialog { .. } => {
                actions.push(Action::Log(format!(
                    "tab {tab}'s top frame sent a frame's dialog: ignored"
                )));
                (None, actions)
            }
            // Answered by the glue before it gets here (see `Core::frame_request`).
            FromPage::FrameSnapshot { .. } => {
                actions.push(Action::Log(format!(
                    "tab {tab} asked for a frame's snapshot the worker could not read: ignored"
                )));
                (None, actions)
            }
        }
    }

    // ---- tab events ----------------------------------------------------------------------

    pub fn on_tab_removed(&mut self, tab: TabId) -> Vec<Action> {
        let mut actions = Vec::new();
        self.forget_tab_loads(tab);
        self.forget_driven(tab);
        self.dialogs_open.remove(&tab);
        let closed = WireError::new(
            ErrorCode::TabClosed,
            format!("tab {tab} was closed during the call"),
        );
        self.fail_calls_in(tab, &closed, &mut actions);
        self.forget_recording(tab, &mut actions);
        if self.tabs.remove(tab) {
            self.send(ToServer::TabClosed { tab }, &mut actions);
            self.tabs_changed(&mut actions);
        }
        actions
    }

    /// Fails every call sent to `tab` and not answered yet with `error`.
    fn fail_calls_in(&mut self, tab: TabId, error: &WireError, actions: &mut Vec<Action>) {
        let pending: Vec<RequestId> = self
            .calls
            .iter()
            .filter(|(_, t)| **t == tab)
            .map(|(id, _)| id.clone())
            .collect();
        for id in pending {
            self.calls.remove(&id);
            // Failed here, it must not run later, nor be answered again.
            self.forget_call(&id);
            self.call_done(&id);
            let error = error.clone();
            self.send(ToServer::CallToolError { id, error }, actions);
        }
    }

    /// `tabs.onUpdated`: `url` when it changed, the tab's current URL and title.
    pub fn on_tab_updated(
        &mut self,
        tab: TabId,
        changed_url: Option<&str>,
        title: Option<&str>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        if let Some(url) = changed_url {
            // Only tabs we know or that an adapter covers: the server has no business seeing
            // the rest of the user's browsing.
            let known = self.tabs.navigated(tab, url);
            if known || self.any_adapter_matches(url) {
                self.send(
                    ToServer::TabNavigated {
                        tab,
                        url: url.to_owned(),
                    },
                    &mut actions,
                );
            }
            if known {
                self.tabs_changed(&mut actions);
                // An in-place navigation (history.pushState) keeps the runtime alive: push it
                // the adapters for the new URL so it announces again. After a full navigation
                // nobody listens yet and the new page's own `page_ready` follows.
                actions.push(Action::ToTab {
                    tab,
                    message: self.adapters_message(url),
                    on_reply: OnReply::Nothing,
                });
            }
        }
        if let Some(title) = title
            && self.tabs.contains(tab)
        {
            self.tabs.set_title(tab, title);
            self.tabs_changed(&mut actions);
        }
        actions
    }

    /// The adapters for every open tab (`open`: id and URL) they match, injecting the runtime
    /// where it is missing, and for every known tab, which then announces its tools again (or
    /// drops those that no longer apply).
    pub fn refresh(&self, open: &[(TabId, String)]) -> Vec<Action> {
        open.iter()
            .filter_map(|(tab, url)| {
                let on_reply = if self.any_adapter_matches(url) {
                    OnReply::InjectIfMissing
                } else if self.tabs.contains(*tab) {
                    OnReply::Nothing
                } else {
                    return None;
                };
                Some(Action::ToTab {
                    tab: *tab,
                    message: self.adapters_message(url),
                    on_reply,
                })
            })
            .collect()
    }

    pub fn on_tab_activated(&mut self, tab: TabId) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.tabs.contains(tab) {
            self.send(ToServer::TabFocused { tab }, &mut actions);
        }
        actions
    }
}

/// The failure of call `id` whose page answered with something else than an answer to it.
fn something_else(tab: TabId, id: &str, why: Option<serde_json::Error>) -> ToServer {
    ToServer::CallToolError {
        id: id.to_owned(),
        error: WireError::new(
            ErrorCode::Internal,
            format!(
                "tab {tab} answered call {id} with something else{}",
                why.map(|e| format!(": {e}")).unwrap_or_default()
            ),
        ),
    }
}

/// Whether a `tabs.sendMessage` rejection says the page went away before answering: it
/// navigated, reloaded, went into the back/forward cache, or its tab closed.
pub fn channel_closed(why: &str) -> bool {
    why.contains("message channel closed")
        || why.contains("message port closed")
        || why.contains("message channel is closed")
        || why.contains("back/forward cache")
}

/// The failures of a send to a tab that say no page is there to answer whatever was sent: the tab
/// is gone, or the page (`frame` of it, or its top frame) went away before answering.
fn page_went_away(tab: TabId, frame: Option<FrameId>, why: &str) -> Option<WireError> {
    if why.contains("No tab with id") {
        Some(WireError::new(
            ErrorCode::TabClosed,
            format!("tab {tab} does not exist (closed?)"),
        ))
    } else if channel_closed(why) {
        let page = match frame {
            Some(frame) => format!("frame f{frame} of tab {tab}"),
            None => format!("tab {tab}"),
        };
        Some(WireError::new(
            ErrorCode::Navigated,
            format!("{page} navigated or reloaded before the call finished"),
        ))
    } else {
        None
    }
}

/// Turns Chrome's rejection of a page op sent to cross-origin frame `frame` (a call with one of its
/// refs, `f3e12`) into an error the client can act on: a frame that is gone, or that loaded another
/// page (no runtime runs in it any more), makes its refs stale.
pub fn frame_send_failure(tab: TabId, frame: FrameId, why: &str) -> WireError {
    page_went_away(tab, Some(frame), why).unwrap_or_else(|| {
        WireError::new(
            ErrorCode::StaleRef,
            format!(
                "the refs of frame f{frame} are stale: that frame is gone or shows another page \
                 now ({why}): take a new snapshot (page_snapshot) and use its refs"
            ),
        )
    })
}

/// A call sent to tab `tab` that no runtime there answered.
fn no_runtime(tab: TabId) -> WireError {
    WireError::new(
        ErrorCode::NoSuchTool,
        format!(
            "tab {tab} has no Tabwire runtime (no adapter matches its page, or it is still loading)"
        ),
    )
}

/// Turns Chrome's `tabs.sendMessage` rejection into an error the client can act on.
pub fn classify_send_failure(tab: TabId, why: &str, had_runtime: bool) -> WireError {
    if let Some(gone) = page_went_away(tab, None, why) {
        gone
    } else if why.contains("Receiving end does not exist") {
        if had_runtime {
            WireError::new(
                ErrorCode::Navigated,
                format!(
                    "tab {tab} navigated away; its tools will be back once the new page registers them"
                ),
            )
        } else {
            no_runtime(tab)
        }
    } else {
        WireError::new(
            ErrorCode::Internal,
            format!("sending to tab {tab} failed: {why}"),
        )
    }
}
