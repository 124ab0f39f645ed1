//! What the toolbar popup may ask the worker, and who counts as the popup: only the extension's
//! own `extension/popup.html` (a content script's or a page's message never changes a grant).
//! The popup asks for grant changes (`change_grant`); the glue looks up what the named tab shows,
//! [`GrantChange::check`] decides, and [`crate::core::Core::change_grant`] sends it on. The
//! answer the popup reads is [`answer_text`]'s.

use bridge::grants::GrantChange;
use bridge::protocol::TabId;
use serde::Deserialize;

use crate::tabs::Sender;

/// The popup page, relative to the extension's root (manifest `action.default_popup`).
pub const POPUP_PAGE: &str = "extension/popup.html";

/// Whether `sender` is this extension's popup page (opened as the toolbar popup or as a tab).
pub fn is_popup(sender: &Sender, our_id: &str) -> bool {
    let page = sender
        .url
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .strip_prefix("chrome-extension://")
        .and_then(|rest| rest.strip_prefix(our_id))
        .and_then(|rest| rest.strip_prefix('/'));
    !our_id.is_empty() && sender.extension_id.as_deref() == Some(our_id) && page == Some(POPUP_PAGE)
}

/// A request of the popup: `{"type": "change_grant", "change": {origin, action, need}, "tab": N}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChangeGrant {
    pub change: GrantChange,
    /// The tab the popup showed (needed to allow: its origin must be the one allowed).
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Deserialize)]
struct Typed {
    #[serde(rename = "type")]
    kind: String,
}

/// Reads a popup request; the error says what was wrong.
pub fn decode(text: Option<&str>) -> Result<ChangeGrant, String> {
    let text = text.ok_or("the popup's message is not text")?;
    let typed: Typed =
        serde_json::from_str(text).map_err(|e| format!("the popup's message is not valid: {e}"))?;
    if typed.kind != "change_grant" {
        return Err(format!(
            "the popup asked for {:?}, which the worker does not do",
            typed.kind
        ));
    }
    serde_json::from_str(text).map_err(|e| format!("the popup's change_grant is not valid: {e}"))
}

/// The popup's answer: `{"ok": true, "changed": bool}` or `{"error": "…"}`.
pub fn answer_text(answer: &Result<bool, String>) -> String {
    match answer {
        Ok(changed) => format!(r#"{{"ok":true,"changed":{changed}}}"#),
        Err(error) => format!(
            r#"{{"error":{}}}"#,
            serde_json::to_string(error).expect("a string serializes")
        ),
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
    fn requests_decode_and_bad_ones_say_why() {
        let text = r#"{"type":"change_grant","tab":5,
            "change":{"origin":"https://a.example","action":"allow","need":"trusted_input"}}"#;
        assert_eq!(
            decode(Some(text)),
            Ok(ChangeGrant {
                change: GrantChange {
                    origin: "https://a.example".into(),
                    action: GrantAction::Allow,
                    need: Need::TrustedInput,
                },
                tab: Some(5),
            })
        );
        assert!(decode(None).unwrap_err().contains("not text"));
        assert!(decode(Some("{")).unwrap_err().contains("not valid"));
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
            read(answer_text(&Ok(true))),
            serde_json::json!({"ok": true, "changed": true})
        );
        assert_eq!(
            read(answer_text(&Err("a \"quoted\" reason".into()))),
            serde_json::json!({"error": "a \"quoted\" reason"})
        );
    }
}
