//! What the toolbar popup may ask the worker, and who counts as the popup: only the extension's
//! own `extension/popup.html` (a content script's or a page's message never changes a grant nor
//! starts a recording). The popup asks for grant changes (`change_grant`); the glue looks up
//! what the named tab shows, [`GrantChange::check`] decides, and
//! [`crate::core::Core::change_grant`] sends it on. It starts, stops and discards a tab's
//! recording (`record`, [`crate::core::Core::record`]) and saves it as a tool
//! (`save_recording`), and stops, allows or shares for agents (`agent_control`, `share_tab`,
//! issue 28). The answer the popup reads is [`answer_text`]'s.

use bridge::grants::GrantChange;
use bridge::protocol::TabId;
use bridge::recording::ToolDraft;
use serde::Deserialize;

use crate::core::RecordAction;

use crate::tabs::Sender;

/// The popup page, relative to the extension's root (manifest `action.default_popup`).
pub const POPUP_PAGE: &str = "extension/popup.html";

/// The window a hand-off shows the person (issue 28's `browser_handoff`).
pub const HANDOFF_PAGE: &str = "extension/handoff.html";

/// Whether `sender` is one of the extension's own pages the person uses: the popup, or a
/// hand-off's window. Only they may send the popup's requests. `our_root` as for [`is_popup`].
pub fn is_persons_page(sender: &Sender, our_id: &str, our_root: &str) -> bool {
    is_page(sender, our_id, our_root, POPUP_PAGE) || is_page(sender, our_id, our_root, HANDOFF_PAGE)
}

/// Whether `sender` is this extension's popup page (opened as the toolbar popup or as a tab).
/// `our_root` is the browser's URL of the extension's root (`runtime.getURL("")`):
/// `chrome-extension://<id>/` in Chrome, `moz-extension://<uuid>/` in Firefox, whose UUID is
/// not the extension's id.
pub fn is_popup(sender: &Sender, our_id: &str, our_root: &str) -> bool {
    is_page(sender, our_id, our_root, POPUP_PAGE)
}

/// Whether `sender` is this extension's page `expected` (relative to the extension's root).
fn is_page(sender: &Sender, our_id: &str, our_root: &str, expected: &str) -> bool {
    let page = sender
        .url
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .strip_prefix(our_root);
    !our_id.is_empty()
        && is_extension_root(our_root)
        && sender.extension_id.as_deref() == Some(our_id)
        && page == Some(expected)
}

/// Whether `root` is an extension's root URL, `<scheme>-extension://<host>/`, with a host: an
/// empty one (the API not there) would let any extension page's path pass.
fn is_extension_root(root: &str) -> bool {
    root.split_once("-extension://")
        .and_then(|(_, rest)| rest.strip_suffix('/'))
        .is_some_and(|host| !host.is_empty() && !host.contains('/'))
}

/// A request of the popup: `{"type": "change_grant", "change": {origin, action, need}, "tab": N}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChangeGrant {
    pub change: GrantChange,
    /// The tab the popup showed (needed to allow: its origin must be the one allowed).
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// The popup's request about a tab's recording: `{"type": "record", "tab": N, "action": "start"}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Record {
    pub tab: TabId,
    pub action: RecordAction,
}

/// `{"type": "save_recording", "tab": N, "tool": {"name": …, "description": …}}`: the tab's
/// stopped recording, saved as that tool.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SaveRecording {
    pub tab: TabId,
    pub tool: ToolDraft,
}

/// `{"type": "agent_control", "agent": "claude-code-2", "stop": true}`: stop an agent, or
/// (`"stop": false`) let it go on (issue 28).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AgentControl {
    pub agent: String,
    pub stop: bool,
}

/// `{"type": "share_tab", "tab": N}`: no agent holds the tab any more (issue 28).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ShareTab {
    pub tab: TabId,
}

/// `{"type": "handoff_answer", "handoff": ID, "done": true}`: the person's Done (or, `false`,
/// Cancel) in a hand-off's window.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HandoffAnswer {
    pub handoff: String,
    pub done: bool,
}

/// A request of the popup.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    HandoffAnswer(HandoffAnswer),
    ChangeGrant(ChangeGrant),
    Record(Record),
    SaveRecording(SaveRecording),
    AgentControl(AgentControl),
    ShareTab(ShareTab),
}

/// Reads a popup request; the error says what was wrong. The text is parsed once into a `Value`
/// and each request decoded from that: serde's decoders of `Value`s are in the worker already
/// (every page message goes through one), while decoding each request from the text compiled
/// its own parser into the wasm (with the restored recordings': −17 KB, BENCHMARKS.md).
pub fn decode(text: Option<&str>) -> Result<Request, String> {
    let text = text.ok_or("the popup's message is not text")?;
    let message: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("the popup's message is not valid: {e}"))?;
    let Some(kind) = message.get("type").and_then(serde_json::Value::as_str) else {
        return Err("the popup's message is not valid: it has no \"type\"".to_owned());
    };
    let kind = kind.to_owned();
    // One error path for every request: each arm only picks the request's type.
    let request = match kind.as_str() {
        "change_grant" => serde_json::from_value(message).map(Request::ChangeGrant),
        "record" => serde_json::from_value(message).map(Request::Record),
        "save_recording" => serde_json::from_value(message).map(Request::SaveRecording),
        "handoff_answer" => serde_json::from_value(message).map(Request::HandoffAnswer),
        "agent_control" => serde_json::from_value(message).map(Request::AgentControl),
        "share_tab" => serde_json::from_value(message).map(Request::ShareTab),
        other => {
            return Err(format!(
                "the popup asked for {other:?}, which the worker does not do"
            ));
        }
    };
    request.map_err(|e| format!("the popup's {kind} is not valid: {e}"))
}

/// What a popup request came to, when it was made.
#[derive(Debug, Clone, PartialEq)]
pub enum Answered {
    /// A grant change (`changed`: it changed something).
    Grant { changed: bool },
    /// A recording started, stopped or discarded.
    Recording,
    /// An agent request sent on (its outcome shows in the next `agents` list).
    Sent,
    /// A recording saved as the tool `tool` (its public name) in `file`, taking `parameters`.
    Saved {
        tool: String,
        file: String,
        parameters: Vec<String>,
    },
}

/// The popup's answer: `{"ok": true, …}` (with `changed`, or the saved tool's `tool`, `file`
/// and `parameters`) or `{"error": "…"}`.
pub fn answer_text(answer: &Result<Answered, String>) -> String {
    let text = |s: &str| serde_json::to_string(s).expect("a string serializes");
    match answer {
        Ok(Answered::Grant { changed }) => format!(r#"{{"ok":true,"changed":{changed}}}"#),
        Ok(Answered::Recording | Answered::Sent) => r#"{"ok":true}"#.to_owned(),
        Ok(Answered::Saved {
            tool,
            file,
            parameters,
        }) => format!(
            r#"{{"ok":true,"tool":{},"file":{},"parameters":{}}}"#,
            text(tool),
            text(file),
            serde_json::to_string(parameters).expect("strings serialize")
        ),
        Err(error) => format!(r#"{{"error":{}}}"#, text(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge::grants::{GrantAction, Need};

    const OURS: &str = "abcdefghijklmnopabcdefghijklmnop";

    fn sender(id: &str, url: &str, tab: Option<TabId>) -> Sender {
        Sender {
            extension_id: Some(id.into()),
            tab,
            frame_id: tab.map(|_| 0),
            url: url.into(),
        }
    }

    #[test]
    fn only_our_popup_page_is_the_popup() {
        let root = format!("chrome-extension://{OURS}/");
        let is_popup = |sender: &Sender, id: &str| is_popup(sender, id, &root);
        let popup = format!("chrome-extension://{OURS}/extension/popup.html");
        assert!(is_popup(&sender(OURS, &popup, None), OURS));
        // Opened as a tab (as the tests do, and a person may): still the popup.
        assert!(is_popup(
            &sender(OURS, &format!("{popup}?x#y"), Some(4)),
            OURS
        ));
        // A content script of ours runs in a web page: its URL is the page's.
        let page = sender(OURS, "https://evil.example/extension/popup.html", Some(3));
        assert!(!is_popup(&page, OURS));
        // Another extension's popup, another page of ours, a look-alike id, no id at all.
        let other = "ponmlkjihgfedcbaponmlkjihgfedcba";
        let theirs = format!("chrome-extension://{other}/extension/popup.html");
        assert!(!is_popup(&sender(other, &theirs, None), OURS));
        assert!(!is_popup(&sender(OURS, &theirs, None), OURS));
        let worker_page = format!("chrome-extension://{OURS}/extension/worker.js");
        assert!(!is_popup(&sender(OURS, &worker_page, None), OURS));
        let longer = format!("chrome-extension://{OURS}x/extension/popup.html");
        assert!(!is_popup(&sender(OURS, &longer, None), OURS));
        let mut anonymous = sender(OURS, &popup, None);
        anonymous.extension_id = None;
        assert!(!is_popup(&anonymous, OURS));
        assert!(!is_popup(
            &sender("", "chrome-extension:///extension/popup.html", None),
            ""
        ));
    }

    #[test]
    fn firefoxs_popup_is_recognized_by_its_root_not_by_the_id() {
        // Firefox: sender.id is the add-on id, the page's host a per-profile UUID.
        let id = "tabwire@tabwire.dev";
        let root = "moz-extension://0f4e3c2a-1b2c-4d5e-8f90-123456789abc/";
        let popup = format!("{root}extension/popup.html");
        assert!(is_popup(&sender(id, &popup, None), id, root));
        let theirs = "moz-extension://99999999-1b2c-4d5e-8f90-123456789abc/extension/popup.html";
        assert!(!is_popup(&sender(id, theirs, None), id, root));
        assert!(!is_popup(&sender("other@x", &popup, None), id, root));
        // No root known: nothing is the popup.
        assert!(!is_popup(
            &sender(id, "moz-extension:///extension/popup.html", None),
            id,
            "moz-extension:///"
        ));
        assert!(!is_popup(&sender(id, &popup, None), id, ""));
    }

    #[test]
    fn requests_decode_and_bad_ones_say_why() {
        let text = r#"{"type":"change_grant","tab":5,
            "change":{"origin":"https://a.example","action":"allow","need":"trusted_input"}}"#;
        assert_eq!(
            decode(Some(text)),
            Ok(Request::ChangeGrant(ChangeGrant {
                change: GrantChange {
                    origin: "https://a.example".into(),
                    action: GrantAction::Allow,
                    need: Need::TrustedInput,
                },
                tab: Some(5),
            }))
        );
        assert_eq!(
            decode(Some(r#"{"type":"record","tab":5,"action":"stop"}"#)),
            Ok(Request::Record(Record {
                tab: 5,
                action: RecordAction::Stop
            }))
        );
        let save = r#"{"type":"save_recording","tab":5,"tool":{"name":"add_book"}}"#;
        assert_eq!(
            decode(Some(save)),
            Ok(Request::SaveRecording(SaveRecording {
                tab: 5,
                tool: ToolDraft {
                    name: "add_book".into(),
                    description: String::new()
                }
            }))
        );
        let bad_action = decode(Some(r#"{"type":"record","tab":5,"action":"rewind"}"#));
        assert!(bad_action.unwrap_err().contains("record is not valid"));
        assert!(decode(None).unwrap_err().contains("not text"));
        assert!(decode(Some("{")).unwrap_err().contains("not valid"));
        let untyped = decode(Some(r#"{"tab":5,"action":"stop"}"#)).unwrap_err();
        assert!(untyped.contains(r#"no "type""#), "{untyped}");
        assert_eq!(
            decode(Some(
                r#"{"type":"agent_control","agent":"mcp-2","stop":true}"#
            )),
            Ok(Request::AgentControl(AgentControl {
                agent: "mcp-2".into(),
                stop: true
            }))
        );
        assert_eq!(
            decode(Some(r#"{"type":"share_tab","tab":9}"#)),
            Ok(Request::ShareTab(ShareTab { tab: 9 }))
        );
        let other = decode(Some(r#"{"type":"open_everything"}"#)).unwrap_err();
        assert!(other.contains("\"open_everything\""), "{other}");
        let bad_need = r#"{"type":"change_grant","change":{"origin":"https://a.example","action":"allow","need":"root"}}"#;
        assert!(
            decode(Some(bad_need))
                .unwrap_err()
                .contains("change_grant is not valid")
        );
    }

    #[test]
    fn answers_are_what_the_popup_reads() {
        let read = |text: String| serde_json::from_str::<serde_json::Value>(&text).unwrap();
        assert_eq!(
            read(answer_text(&Ok(Answered::Grant { changed: true }))),
            serde_json::json!({"ok": true, "changed": true})
        );
        assert_eq!(
            read(answer_text(&Ok(Answered::Recording))),
            serde_json::json!({"ok": true})
        );
        let saved = Answered::Saved {
            tool: "a_example_add_book".into(),
            file: "C:\\Users\\u\\a \"b\".json".into(),
            parameters: vec!["title".into()],
        };
        assert_eq!(
            read(answer_text(&Ok(saved))),
            serde_json::json!({"ok": true, "tool": "a_example_add_book",
                "file": "C:\\Users\\u\\a \"b\".json", "parameters": ["title"]})
        );
        assert_eq!(
            read(answer_text(&Err("a \"quoted\" reason".into()))),
            serde_json::json!({"error": "a \"quoted\" reason"})
        );
    }
}
