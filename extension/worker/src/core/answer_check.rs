//! Issue 26's check after the fact, in the worker: a page tool's answer is passed on only while
//! the tab still shows the origin the permission gate allowed for the call. The page's runtime
//! checks the origin when the call starts; but a page can send itself to another site while its
//! runtime reads (a big DOM takes a while), and Chrome commits the other site's document in
//! another process before the old runtime's answer arrives. The worker hears that commit
//! (`webNavigation.onCommitted`, [`super::NavEvent::Committed`]) first, so an answer that comes
//! after it is dropped here with `NAVIGATED` rather than forwarded labelled with the origin the
//! tab no longer shows; and because under load the commit's event can come after the answer,
//! the glue asks the browser for the tab's top document as each checked answer arrives
//! ([`Core::heard_top_document`]). Another document of the same origin is let through (its refs die by
//! document id, and its content is the allowed origin's). A state a page pushes
//! (`state_update`) is dropped when it comes from the origin the tab left for another at its last
//! commit (a page of a newer origin whose commit the worker has not heard yet is not dropped).
//! A state the server asked for (`request_state`, `site_state`'s fresh read) is checked as a page
//! tool's answer is, against the origin the tab showed when it was asked.
//! Part of [`Core`].

use std::collections::HashMap;

use bridge::protocol::{RequestId, TabId};
use bridge::{ErrorCode, WireError};

use super::Core;

/// Page tool calls whose answers are awaited with their gate's origin, kept at most (the ended
/// ones are swept past it: a call can end without an answer from its page).
const MAX_GATED: usize = 256;

/// What the check needs: each running page tool call's gated origin, each tab's committed URL.
#[derive(Default)]
pub(super) struct AnswerCheck {
    /// Call → the origin the gate allowed, and whether the call acts (its answer dropped, the
    /// action may still have been done).
    gated: HashMap<RequestId, (String, bool)>,
    /// Tab → the URL of the top document Chrome committed last in it, and the one before.
    committed: HashMap<TabId, (String, Option<String>)>,
}

impl AnswerCheck {
    /// Chrome committed a top document at `url` in `tab` (heard again, as the event that follows
    /// the browser's own answer is, it changes nothing: the origin the tab left stays known).
    pub(super) fn committed(&mut self, tab: TabId, url: &str) {
        if self.committed.get(&tab).is_some_and(|(now, _)| now == url) {
            return;
        }
        let before = self.committed.remove(&tab).map(|(last, _)| last);
        self.committed.insert(tab, (url.to_owned(), before));
    }

    pub(super) fn forget_tab(&mut self, tab: TabId) {
        self.committed.remove(&tab);
    }
}

impl Core {
    /// Page tool call `id` was allowed on `origin` (the server's gate: [`bridge::page::PageCall`]).
    pub(super) fn gate_answer(&mut self, id: &str, origin: Option<&str>, acts: bool) {
        let Some(origin) = origin else { return };
        if self.answer_check.gated.len() >= MAX_GATED {
            let calls = &self.calls;
            self.answer_check
                .gated
                .retain(|id, _| calls.contains_key(id));
        }
        self.answer_check
            .gated
            .insert(id.to_owned(), (origin.to_owned(), acts));
    }

    /// Whether the answer to `id` is checked after the fact (its call or state request was
    /// asked of an origin): the glue then asks the browser for the tab's top document first and
    /// says it with [`Core::heard_top_document`].
    pub fn answer_is_checked(&self, id: &str) -> bool {
        self.answer_check.gated.contains_key(id)
    }

    /// The browser says `tab`'s top document is at `url` now, asked as an answer arrived: under
    /// load, a commit can reach the browser before its `onCommitted` event reaches the worker,
    /// and the answer of the page the tab left must not pass in between.
    pub fn heard_top_document(&mut self, tab: TabId, url: &str) {
        self.answer_check.committed(tab, url);
    }

    /// The origin of the top document Chrome committed last in `tab`, when the worker heard it.
    pub(super) fn shown_origin(&self, tab: TabId) -> Option<String> {
        let (url, _) = self.answer_check.committed.get(&tab)?;
        bridge::origin::text_of(url)
    }

    /// Whether `tab` left the origin of `url` (a sender's URL, as Chrome names it) for another
    /// at its last commit: what a page of that origin sends is not the tab's any more.
    pub(super) fn left_origin(&self, tab: TabId, url: &str) -> bool {
        let Some((now, Some(before))) = self.answer_check.committed.get(&tab) else {
            return false;
        };
        let of = bridge::origin::text_of;
        of(url) == of(before) && of(url) != of(now)
    }

    /// The error the answer to call `id` from `tab` gets instead of being passed on: the tab
    /// committed a document of another origin than the one the call was allowed on. Forgets
    /// the call either way (its answer has come).
    pub(super) fn moved_away(&mut self, id: &str, tab: TabId) -> Option<WireError> {
        let (allowed, acts) = self.answer_check.gated.remove(id)?;
        let (url, _) = self.answer_check.committed.get(&tab)?;
        let shown = bridge::origin::text_of(url);
        if shown.as_deref() == Some(allowed.as_str()) {
            return None;
        }
        let shown = shown.unwrap_or_else(|| url.clone());
        let error = WireError::new(
            ErrorCode::Navigated,
            format!(
                "tab {tab} went to {shown} before the answer from {allowed} arrived: nothing of \
                 it is passed on; take a snapshot (page_snapshot) of the page it shows now"
            ),
        );
        Some(if acts { error.maybe_performed() } else { error })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{connected, frames};
    use super::super::{Action, NavEvent, OnReply};
    use super::*;
    use bridge::page::PageCall;

    fn page_call(op: &str, origin: &str) -> PageCall {
        PageCall {
            op: super::super::tests::op_of(op),
            frame: 0,
            doc: None,
            origin: Some(origin.into()),
            timeout_ms: 500,
            trusted_input: false,
            files: Vec::new(),
        }
    }

    fn commit(core: &mut Core, tab: TabId, url: &str) {
        core.on_navigation(
            tab,
            NavEvent::Committed {
                url: url.into(),
                document: Some(format!("doc of {url}")),
            },
        );
    }

    fn answer(core: &mut Core, id: &str) -> serde_json::Value {
        let done = json!({"type": "call_tool_result", "id": id, "result": {"text": "h1 A"}});
        let sent = frames(&core.on_call_reply(id, Ok(Some(done.to_string()))));
        sent.into_iter().next().expect("one frame")
    }

    /// Issue 26: a state the leaving page pushes after the tab committed another origin's
    /// document is dropped; the shown page's is passed on.
    #[test]
    fn a_state_pushed_by_a_page_the_tab_no_longer_shows_is_dropped() {
        let mut core = connected();
        let push = r#"{"type":"state_update","state":{"todos":1},"ts":1}"#;
        let from = |url: &str| crate::tabs::Sender {
            url: url.into(),
            ..super::super::tests::sender(3)
        };
        commit(&mut core, 3, "http://127.0.0.1:8000/a");
        let (_, actions) = core.on_page_message(&from("http://127.0.0.1:8000/a"), Some(push));
        assert_eq!(frames(&actions)[0]["type"], "state_update");
        // The next page's push may come before the worker hears of its commit: it is the tab's.
        let (_, actions) =
            core.on_page_message(&from("http://elsewhere.localhost:9000/"), Some(push));
        assert_eq!(frames(&actions)[0]["type"], "state_update");
        commit(&mut core, 3, "http://elsewhere.localhost:9000/");
        let (_, actions) = core.on_page_message(&from("http://127.0.0.1:8000/a"), Some(push));
        assert!(frames(&actions).is_empty(), "{actions:?}");
        let (_, actions) =
            core.on_page_message(&from("http://elsewhere.localhost:9000/"), Some(push));
        assert_eq!(frames(&actions)[0]["type"], "state_update");
    }

    /// Issue 26: a state asked for (`site_state` with force_refresh) whose answer comes after the
    /// tab committed another origin's document is dropped with NAVIGATED; one from the same
    /// origin is passed on.
    #[test]
    fn a_state_asked_for_that_arrives_after_the_tab_went_to_another_origin_is_dropped() {
        let mut core = connected();
        super::super::tests::announce(&mut core, 3);
        commit(&mut core, 3, "http://127.0.0.1:8000/a");
        let ask = |core: &mut Core, id: &str| {
            let request = json!({"type": "request_state", "id": id, "tab": 3});
            core.on_server_frame(&request.to_string())
        };
        let reply = |id: &str| {
            Ok(Some(
                json!({"type": "state_response", "id": id, "state": {"todos": 1}}).to_string(),
            ))
        };
        ask(&mut core, "s1");
        commit(&mut core, 3, "http://127.0.0.1:8000/b");
        let passed = frames(&core.on_state_reply("s1", 3, reply("s1")));
        assert_eq!(passed[0]["type"], "state_response", "{passed:?}");

        ask(&mut core, "s2");
        commit(&mut core, 3, "http://elsewhere.localhost:9000/");
        let dropped = frames(&core.on_state_reply("s2", 3, reply("s2")));
        assert_eq!(dropped[0]["type"], "state_error", "{dropped:?}");
        assert_eq!(dropped[0]["error"]["code"], "NAVIGATED");
        assert!(
            !dropped[0].to_string().contains("todos"),
            "nothing of the state"
        );

        // The commit's event has not come yet, but the browser, asked as the answer arrived,
        // says the tab shows another origin: dropped too; the event that follows changes nothing.
        commit(&mut core, 3, "http://127.0.0.1:8000/a");
        ask(&mut core, "s3");
        assert!(core.answer_is_checked("s3"));
        core.heard_top_document(3, "http://elsewhere.localhost:9000/");
        let dropped = frames(&core.on_state_reply("s3", 3, reply("s3")));
        assert_eq!(dropped[0]["error"]["code"], "NAVIGATED", "{dropped:?}");
        assert!(!core.answer_is_checked("s3"), "the answer has come");
        commit(&mut core, 3, "http://elsewhere.localhost:9000/");
        assert!(
            core.left_origin(3, "http://127.0.0.1:8000/a"),
            "the origin the tab left stays known"
        );
    }

    /// Issue 26: the runtime of the allowed page answers after the tab committed another
    /// origin's document: the answer is dropped with NAVIGATED, never passed on.
    #[test]
    fn an_answer_that_arrives_after_the_tab_went_to_another_origin_is_dropped() {
        let mut core = connected();
        let allowed = "http://127.0.0.1:8000";
        commit(&mut core, 3, "http://127.0.0.1:8000/big");
        core.page_op("p1".into(), Some(3), page_call("page_snapshot", allowed));
        // Another page of the same origin: still that origin's content.
        commit(&mut core, 3, "http://127.0.0.1:8000/other");
        assert_eq!(answer(&mut core, "p1")["type"], "call_tool_result");

        core.page_op("p2".into(), Some(3), page_call("page_read", allowed));
        commit(&mut core, 3, "http://elsewhere.localhost:9000/");
        let dropped = answer(&mut core, "p2");
        assert_eq!(dropped["type"], "call_tool_error", "{dropped}");
        assert_eq!(dropped["error"]["code"], "NAVIGATED");
        let message = dropped["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("tab 3 went to http://elsewhere.localhost:9000 before the answer from http://127.0.0.1:8000"),
            "{message}"
        );
        assert!(
            !dropped.to_string().contains("h1 A"),
            "nothing of the answer"
        );

        // An act's answer dropped so says the action may have been done.
        commit(&mut core, 3, "http://127.0.0.1:8000/big");
        core.page_op("p3".into(), Some(3), page_call("page_act", allowed));
        commit(&mut core, 3, "about:blank");
        let dropped = answer(&mut core, "p3");
        assert_eq!(dropped["error"]["code"], "NAVIGATED");
        assert_eq!(dropped["error"]["effect"], "maybe", "{dropped}");

        // A call the gate did not name an origin for (an adapter's) is not this check's.
        commit(&mut core, 5, "http://x.test/");
        let call = json!({"type":"call_tool","id":"c1","tab":5,"tool":"todomvc_list_todos",
                          "args":{},"timeout_ms":5000});
        let actions = core.on_server_frame(&call.to_string());
        assert!(
            actions.iter().any(|a| matches!(
                a,
                Action::ToTab {
                    on_reply: OnReply::CallTool(_),
                    ..
                }
            )),
            "{actions:?}"
        );
        commit(&mut core, 5, "http://y.test/");
        assert_eq!(answer(&mut core, "c1")["type"], "call_tool_result");
    }
}
