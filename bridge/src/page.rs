//! Messages between the service worker and the content-script runtime in a tab
//! (`chrome.runtime.sendMessage` / `chrome.tabs.sendMessage`), tagged by `"type"` like the wire
//! protocol. The worker adds what only it knows (the tab id, from `sender.tab`) before forwarding.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::adapter::Adapter;
pub use crate::protocol::RuntimeKind;
use crate::protocol::{RequestId, ToolSpec, WireError};

/// From the content script to the service worker.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromPage {
    /// The runtime started in a page (or the page's URL changed in place); the worker answers
    /// with [`ToPage::Adapters`].
    PageReady {
        url: String,
        title: String,
        /// Which build of the injector runs (absent from older runtimes).
        #[serde(default)]
        runtime: Option<RuntimeKind>,
    },
    /// The tools this page offers now (empty: none).
    ToolsUpdated {
        url: String,
        title: String,
        tools: Vec<ToolSpec>,
    },
    /// The answer to [`ToPage::CallTool`], given through the message's response callback.
    CallToolResult {
        id: RequestId,
        result: Value,
    },
    CallToolError {
        id: RequestId,
        error: WireError,
    },
    /// The answer to a call whose `navigate` step is loading another page: the worker sends
    /// [`ToPage::ContinueTool`] to the tab's next runtime once that announces `tool`.
    CallToolContinue {
        id: RequestId,
        tool: String,
        /// The index of the next top-level step.
        resume_at: usize,
        /// The arguments and what the steps read so far.
        vars: Map<String, Value>,
        /// What is left of the call's time.
        timeout_ms: u64,
    },
    /// The page's state, pushed after every call of a tool not annotated `read_only`.
    StateUpdate {
        state: Value,
        ts: u64,
    },
    /// The answer to [`ToPage::RequestState`], given through the message's response callback.
    StateResponse {
        id: RequestId,
        state: Value,
    },
    StateError {
        id: RequestId,
        error: WireError,
    },
}

/// From the service worker to the content script.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToPage {
    /// The adapters whose match patterns cover the page's URL: the answer to
    /// [`FromPage::PageReady`], and pushed unasked when the adapters change or the tab's URL
    /// changes in place (the page then announces its tools again).
    Adapters {
        adapters: Vec<Adapter>,
    },
    CallTool {
        id: RequestId,
        tool: String,
        args: Value,
        timeout_ms: u64,
    },
    Cancel {
        id: RequestId,
    },
    /// Run the state extractors now; answered with [`FromPage::StateResponse`] or
    /// [`FromPage::StateError`].
    RequestState {
        id: RequestId,
    },
    /// Runs the rest of a call that navigated here (see [`FromPage::CallToolContinue`]); answered
    /// like [`ToPage::CallTool`].
    ContinueTool {
        id: RequestId,
        tool: String,
        resume_at: usize,
        vars: Map<String, Value>,
        timeout_ms: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn page_messages_golden() {
        let ready = FromPage::PageReady {
            url: "http://x/".into(),
            title: "X".into(),
            runtime: Some(RuntimeKind::Js),
        };
        assert_eq!(
            serde_json::to_value(&ready).unwrap(),
            json!({"type":"page_ready","url":"http://x/","title":"X","runtime":"js"})
        );
        let old: FromPage =
            serde_json::from_value(json!({"type":"page_ready","url":"u","title":"t"})).unwrap();
        assert!(matches!(old, FromPage::PageReady { runtime: None, .. }));
        let pushed = ToPage::Adapters { adapters: vec![] };
        assert_eq!(
            serde_json::to_value(&pushed).unwrap(),
            json!({"type":"adapters","adapters":[]})
        );
        let reply = FromPage::CallToolResult {
            id: "a".into(),
            result: json!({"n": 1}),
        };
        assert_eq!(
            serde_json::to_value(&reply).unwrap(),
            json!({"type":"call_tool_result","id":"a","result":{"n":1}})
        );
        let onward = FromPage::CallToolContinue {
            id: "a".into(),
            tool: "t_x".into(),
            resume_at: 2,
            vars: json!({"q": 1}).as_object().cloned().unwrap(),
            timeout_ms: 900,
        };
        assert_eq!(
            serde_json::to_value(&onward).unwrap(),
            json!({"type":"call_tool_continue","id":"a","tool":"t_x","resume_at":2,"vars":{"q":1},"timeout_ms":900})
        );
        let resume: ToPage = serde_json::from_value(
            json!({"type":"continue_tool","id":"a","tool":"t_x","resume_at":2,"vars":{"q":1},"timeout_ms":900}),
        )
        .unwrap();
        assert!(matches!(resume, ToPage::ContinueTool { resume_at: 2, .. }));
        let call: ToPage = serde_json::from_value(
            json!({"type":"call_tool","id":"a","tool":"t_x","args":{"q":1},"timeout_ms":10}),
        )
        .unwrap();
        assert_eq!(
            call,
            ToPage::CallTool {
                id: "a".into(),
                tool: "t_x".into(),
                args: json!({"q":1}),
                timeout_ms: 10
            }
        );
    }
}
