//! Messages between the service worker and the content-script runtime in a tab
//! (`chrome.runtime.sendMessage` / `chrome.tabs.sendMessage`), tagged by `"type"` like the wire
//! protocol. The worker adds what only it knows (the tab id, from `sender.tab`) before forwarding.

use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::protocol::RuntimeKind;
use crate::protocol::{OfferedTool, RequestId, WireError};
use crate::tagged;

tagged::tagged_enum! {
    /// From the content script to the service worker. `Deserialize` is written by
    /// [`tagged::tagged_enum!`], field by field (see [`crate::tagged`] for why).
    #[derive(Serialize, Clone, Debug, PartialEq)]
    pub enum FromPage by "type", listed in FROM_PAGE_TYPES {
        /// The runtime started in a page (or the page's URL changed in place); the worker answers
        /// with [`ToPage::Adapters`].
        "page_ready" => PageReady {
            url: String,
            title: String,
            /// Which build of the injector runs (absent from older runtimes).
            #[serde(default)]
            runtime: Option<RuntimeKind>,
        },
        /// The tools this page offers now (empty: none): its adapters' by name, its own (WebMCP)
        /// described in full.
        "tools_updated" => ToolsUpdated {
            url: String,
            title: String,
            tools: Vec<OfferedTool>,
        },
        /// The answer to [`ToPage::CallTool`], given through the message's response callback.
        "call_tool_result" => CallToolResult {
            id: RequestId,
            result: Value,
        },
        "call_tool_error" => CallToolError {
            id: RequestId,
            error: WireError,
        },
        /// The answer to a call whose `navigate` step is loading another page, or whose click or
        /// key press set one loading with steps left: the worker sends [`ToPage::ContinueTool`] to
        /// the tab's next runtime once that announces `tool`.
        "call_tool_continue" => CallToolContinue {
            id: RequestId,
            tool: String,
            /// The index of the next top-level step.
            resume_at: usize,
            /// The arguments and what the steps read so far.
            vars: Map<String, Value>,
            /// What is left of the call's time.
            timeout_ms: u64,
            /// The step that leads to the next page, for the errors that name it.
            #[serde(default)]
            step: String,
            /// Whether that step acted on the page (a click, a key): then a failure to continue
            /// may come after the action was performed.
            #[serde(default)]
            acted: bool,
        },
        /// The answer to a call whose steps are done and whose last action set off the loading of
        /// another page (a form submitted, a link followed): the worker answers `result` once the new
        /// document has committed (its request answered), at most `timeout_ms` from now.
        "call_tool_landing" => CallToolLanding {
            id: RequestId,
            result: Value,
            /// The step that set the navigation off.
            step: String,
            /// Where the page said it was going (a redirect may land elsewhere).
            url: String,
            timeout_ms: u64,
        },
        /// The page's state, pushed after every call of a tool not annotated `read_only`.
        "state_update" => StateUpdate {
            state: Value,
            ts: u64,
        },
        /// The page handed one of its dialogs to the browser (`open`: a person must answer it; the
        /// page is frozen until then), or that dialog was answered (`extension/dialogs.js`).
        "dialog_shown" => DialogShown {
            open: bool,
        },
        /// A dialog a cross-origin child frame's shim answered itself, sent by the relay in that
        /// frame (`extension/dialogs-relay.js`): its report as the shim wrote it. The worker gives it
        /// to the tab's top frame ([`ToPage::FrameDialog`]), where the calls run.
        "frame_dialog" => FrameDialog {
            report: String,
        },
        /// The answer to [`ToPage::RequestState`], given through the message's response callback.
        "state_response" => StateResponse {
            id: RequestId,
            state: Value,
        },
        "state_error" => StateError {
            id: RequestId,
            error: WireError,
        },
        /// Input for call `call` that the worker performs through Chrome's debugger (only `Input`
        /// commands, only for a call the worker sent with `trusted_input`); answered through the
        /// message's response callback with a [`TrustedInputAnswer`].
        "trusted_input" => TrustedInput {
            call: RequestId,
            commands: Vec<crate::trusted_input::Command>,
        },
        /// A snapshot's request for the part a cross-origin child frame shows: the `nth` (from 0)
        /// child frame of the sender's frame that shows `src` (an `<iframe>`'s URL; Chrome tells a
        /// content script no frame id for an element), or, when none shows it (the frame went to
        /// another page by itself), the child frame at `index` among the sender's (`window.frames`
        /// order, the document's, which is also the order Chrome lists a frame's children in). The
        /// worker finds that frame, runs the runtime in it, sends it [`ToPage::PageOp`] with `op`
        /// (a whole snapshot, [`crate::page_ops::WireOp::whole_snapshot`]), and gives its answer (the text of a `call_tool_result` or
        /// `call_tool_error`) as the response, within `timeout_ms`; no response when there is no
        /// such frame or it did not answer in time.
        "frame_snapshot" => FrameSnapshot {
            src: String,
            nth: u32,
            index: u32,
            op: crate::page_ops::WireOp,
            timeout_ms: u64,
        },
        /// A person's input the page recorded while the popup records this tab
        /// ([`ToPage::Record`]); the worker adds it to the tab's recording.
        "recorded" => Recorded {
            step: crate::recording::RecordedStep,
        },
    }
}

/// The worker's answer to [`FromPage::TrustedInput`]: done, or why not.
#[derive(Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub struct TrustedInputAnswer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
}

tagged::tagged_enum! {
    /// From the service worker to the content script. `Deserialize` is written by
    /// [`tagged::tagged_enum!`], field by field (see [`crate::tagged`] for why).
    #[derive(Serialize, Clone, Debug, PartialEq)]
    pub enum ToPage by "type", listed in TO_PAGE_TYPES {
        /// The adapters whose match patterns cover the page's URL, and the code adapters likewise
        /// (their handlers are in the page's bundle): the answer to [`FromPage::PageReady`], and pushed
        /// unasked when the adapters change or the tab's URL changes in place (the page then announces
        /// its tools again). Each is an adapter's JSON ([`crate::adapter::Adapter`]) as the server sent
        /// it: the page decodes each one itself, and a bad one alone is left out.
        "adapters" => Adapters {
            adapters: Vec<Value>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            code_adapters: Vec<Value>,
        },
        "call_tool" => CallTool {
            id: RequestId,
            tool: String,
            args: Value,
            timeout_ms: u64,
            /// Whether the call's input goes through Chrome's debugger (the origin's trusted-input
            /// grant): the runtime then asks the worker with [`FromPage::TrustedInput`].
            #[serde(default, skip_serializing_if = "std::ops::Not::not")]
            trusted_input: bool,
            /// Files the call puts on the page, read by the server from the user's uploads
            /// directory ([`crate::upload`]).
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            files: Vec<crate::upload::UploadFile>,
        },
        "cancel" => Cancel {
            id: RequestId,
        },
        /// Run the state extractors now; answered with [`FromPage::StateResponse`] or
        /// [`FromPage::StateError`].
        "request_state" => RequestState {
            id: RequestId,
        },
        /// A page tool's call ([`crate::page_ops`]), as the server sent it to the worker
        /// ([`crate::ToExtension::PageOp`]); answered like [`ToPage::CallTool`].
        "page_op" => PageOp {
            id: RequestId,
            /// The tab the worker sent it to, echoed in the answer (the call may not have named one).
            tab: crate::protocol::TabId,
            /// Its fields are the message's own. The worker leaves out `origin` for a child frame
            /// (it checks the tab's origin itself); a top frame's runtime whose document shows
            /// another refuses the call (`NAVIGATED`, [`crate::browser_ops::still_shows`]).
            #[serde(flatten)]
            call: PageCall,
        },
        /// Runs the rest of a call that navigated here (see [`FromPage::CallToolContinue`]); answered
        /// like [`ToPage::CallTool`].
        "continue_tool" => ContinueTool {
            id: RequestId,
            tool: String,
            resume_at: usize,
            vars: Map<String, Value>,
            timeout_ms: u64,
            /// Whether the call's input goes through Chrome's debugger (the origin's trusted-input
            /// grant): the runtime then asks the worker with [`FromPage::TrustedInput`].
            #[serde(default, skip_serializing_if = "std::ops::Not::not")]
            trusted_input: bool,
            /// The call's files, kept by the worker for the steps after a navigation.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            files: Vec<crate::upload::UploadFile>,
        },
        /// Record the person's input in this page (sent by the worker while the popup records the
        /// tab, again to each page the tab loads) or stop: [`FromPage::Recorded`] for each step.
        "record" => Record {
            recording: bool,
        },
        /// A dialog a cross-origin child frame answered itself ([`FromPage::FrameDialog`]), for the
        /// calls running in this (top) frame; `origin` is the frame's, as Chrome names the sender.
        "frame_dialog" => FrameDialog {
            report: String,
            origin: String,
        },
    }
}

/// A page tool's call: what the server decided (the permission gate's origin and trusted-input
/// grant, the uploads it read) and the page carries out. The server builds it once; the worker
/// passes it on whole in [`ToPage::PageOp`], and the page's runtime receives it whole. Its fields
/// are written flat in both messages, and read from them by [`PageCall::take`].
///
/// `F` is how its files travel: declared on the socket, their bytes in chunks after it
/// ([`crate::upload::DeclaredFile`]); whole, to the page, once the worker has them all.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct PageCall<F = crate::upload::UploadFile> {
    /// The operation, read from the client's arguments once, by the server
    /// ([`crate::page_ops::parse`]); the page decodes it, the worker only reads its tool.
    pub op: crate::page_ops::WireOp,
    /// The Chrome frame id of the frame whose runtime runs it (0, left out: the top frame): the
    /// frame of its ref (`f3e12`), which the server read, so the worker routes it without
    /// decoding the operation; the runtime there names its refs with it.
    #[serde(default, skip_serializing_if = "is_top_frame")]
    pub frame: crate::page_ops::FrameId,
    /// The document the call's ref came from, when the server knows it: the page refuses a ref
    /// of another one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// The origin the permission gate allowed: the call fails if the tab shows another one by
    /// the time it would act (the server may have known the tab's URL from before a navigation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    pub timeout_ms: u64,
    /// Whether the call's input goes through Chrome's debugger (the origin's trusted-input grant,
    /// which only the server knows): the runtime then asks the worker with
    /// [`FromPage::TrustedInput`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trusted_input: bool,
    /// Files the call puts on the page, read by the server from the user's uploads directory
    /// ([`crate::upload`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<F>,
}

impl<F: serde::de::DeserializeOwned> PageCall<F> {
    /// Takes the call's fields from a message's (what `Deserialize` would do, without the code
    /// a derived one costs the wasm builds: see [`crate::tagged`]).
    pub(crate) fn take(f: &mut tagged::Fields) -> Result<PageCall<F>, serde_json::Error> {
        Ok(PageCall {
            op: crate::page_ops::WireOp::take(f)?,
            frame: f.opt("frame")?,
            doc: f.opt("doc")?,
            origin: f.opt("origin")?,
            timeout_ms: f.req("timeout_ms")?,
            trusted_input: f.opt("trusted_input")?,
            files: f.opt("files")?,
        })
    }

    /// The same call carrying `files` (the bytes of those it declared, once they are all in).
    pub fn with_files<G>(self, files: Vec<G>) -> PageCall<G> {
        PageCall {
            op: self.op,
            frame: self.frame,
            doc: self.doc,
            origin: self.origin,
            timeout_ms: self.timeout_ms,
            trusted_input: self.trusted_input,
            files,
        }
    }
}

pub(crate) fn is_top_frame(frame: &crate::page_ops::FrameId) -> bool {
    *frame == 0
}

/// A page's answer to a `call_tool`, as the worker reads it.
#[derive(Debug, PartialEq)]
pub enum CallAnswer {
    /// The call's result: the page's text is the wire's `call_tool_result` frame as it is
    /// (the two protocols write that message alike), checked but not decoded.
    Result,
    /// Anything else, decoded.
    Message(FromPage),
}

/// The fields of a `call_tool_result` answer, the result only checked for being JSON.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultAnswer<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[allow(dead_code)] // Read only to check that it is JSON.
    result: serde::de::IgnoredAny,
}

impl CallAnswer {
    /// Reads the answer `text` to call `id`. A result for `id` with no other field is not
    /// decoded: building its value and writing it again costs the worker more than the check (a
    /// list of 500 records: BENCHMARKS.md); everything else is decoded like any message.
    pub fn read(text: &str, id: &str) -> Result<CallAnswer, serde_json::Error> {
        match serde_json::from_str::<ResultAnswer>(text) {
            Ok(answer) if answer.kind == "call_tool_result" && answer.id == id => {
                Ok(CallAnswer::Result)
            }
            _ => serde_json::from_str(text).map(CallAnswer::Message),
        }
    }

    /// The result in `text` when it is a `call_tool_result` (of any call), else `None`: what the
    /// top frame's runtime reads from a child frame's snapshot answer. It reads that one variant
    /// only, so the runtime's wasm carries no decoder of every page message (−29 KB).
    pub fn result_of(text: &str) -> Option<Value> {
        let Ok(Value::Object(mut fields)) = serde_json::from_str(text) else {
            return None;
        };
        let is_result = fields.get("type").and_then(Value::as_str) == Some("call_tool_result");
        is_result.then(|| fields.remove("result")).flatten()
    }
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
        let pushed = ToPage::Adapters {
            adapters: vec![],
            code_adapters: vec![],
        };
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
            step: "steps[1] (click)".into(),
            acted: true,
        };
        assert_eq!(
            serde_json::to_value(&onward).unwrap(),
            json!({"type":"call_tool_continue","id":"a","tool":"t_x","resume_at":2,"vars":{"q":1},"timeout_ms":900,"step":"steps[1] (click)","acted":true})
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
                timeout_ms: 10,
                trusted_input: false,
                files: Vec::new(),
            }
        );
    }

    #[test]
    fn every_page_message_round_trips() {
        let error = WireError::new(crate::ErrorCode::Timeout, "t");
        let vars = json!({"q": 1}).as_object().cloned().unwrap();
        let adapter: Value = serde_json::from_value(json!({
            "name": "a", "match": ["http://127.0.0.1/*"],
            "tools": [{"name": "t", "description": "d", "steps": [{"step": "click", "selector": "#x"}]}]
        }))
        .unwrap();
        let from_page = [
            FromPage::PageReady {
                url: "u".into(),
                title: "t".into(),
                runtime: Some(RuntimeKind::Wasm),
            },
            FromPage::ToolsUpdated {
                url: "u".into(),
                title: "t".into(),
                tools: vec![
                    OfferedTool::Adapter("a_t".into()),
                    OfferedTool::Described(crate::protocol::ToolSpec {
                        name: "webmcp_x_t".into(),
                        adapter: "webmcp".into(),
                        description: "d".into(),
                        title: None,
                        input_schema: json!({"type": "object"}),
                        output_schema: Some(json!({"type": "object"})),
                        annotations: Default::default(),
                    }),
                ],
            },
            FromPage::CallToolResult {
                id: "i".into(),
                result: json!([1.5, "x", null]),
            },
            FromPage::CallToolError {
                id: "i".into(),
                error: error.clone(),
            },
            FromPage::CallToolContinue {
                id: "i".into(),
                tool: "a_t".into(),
                resume_at: 3,
                vars: vars.clone(),
                timeout_ms: 5,
                step: "steps[2] (navigate)".into(),
                acted: false,
            },
            FromPage::CallToolLanding {
                id: "i".into(),
                result: json!({"saved": true}),
                step: "steps[3] (click)".into(),
                url: "http://127.0.0.1/P".into(),
                timeout_ms: 5,
            },
            FromPage::StateUpdate {
                state: json!({"n": 2}),
                ts: 9,
            },
            FromPage::DialogShown { open: true },
            FromPage::FrameDialog {
                report: r#"{"kind":"alert"}"#.into(),
            },
            FromPage::StateResponse {
                id: "i".into(),
                state: json!(null),
            },
            FromPage::StateError {
                id: "i".into(),
                error: error.clone(),
            },
            FromPage::TrustedInput {
                call: "i".into(),
                commands: crate::trusted_input::click(1.0, 2.0, 1),
            },
            FromPage::FrameSnapshot {
                src: "http://b.test/pay".into(),
                nth: 1,
                index: 2,
                op: crate::page_ops::WireOp::whole_snapshot(500),
                timeout_ms: 2000,
            },
            FromPage::Recorded {
                step: crate::recording::RecordedStep::Fill {
                    target: "label=Password".into(),
                    label: "Password".into(),
                    value: crate::recording::Typed::Secret,
                },
            },
        ];
        let mut seen = Vec::new();
        for msg in from_page {
            let text = serde_json::to_string(&msg).unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(value["type"], msg.type_name(), "{text}");
            assert_eq!(serde_json::from_str::<FromPage>(&text).unwrap(), msg);
            assert_eq!(FromPage::from_value(value).unwrap(), msg);
            seen.push(msg.type_name());
        }
        assert_eq!(seen, FROM_PAGE_TYPES);
        let to_page = [
            ToPage::Adapters {
                adapters: vec![adapter.clone()],
                code_adapters: vec![adapter],
            },
            ToPage::CallTool {
                id: "i".into(),
                tool: "a_t".into(),
                args: json!({"q": 1}),
                timeout_ms: 10,
                trusted_input: true,
                files: Vec::new(),
            },
            ToPage::Cancel { id: "i".into() },
            ToPage::RequestState { id: "i".into() },
            ToPage::PageOp {
                id: "i".into(),
                tab: 4,
                call: PageCall {
                    op: act_on(crate::page_ops::Ref::top(1)),
                    frame: 0,
                    doc: None,
                    origin: Some("http://127.0.0.1:8000".into()),
                    timeout_ms: 9,
                    trusted_input: false,
                    files: Vec::new(),
                },
            },
            // A child frame's: `a_page_op_carries_the_servers_call_flat`.
            ToPage::ContinueTool {
                id: "i".into(),
                tool: "a_t".into(),
                resume_at: 1,
                vars,
                timeout_ms: 7,
                trusted_input: true,
                files: Vec::new(),
            },
            ToPage::Record { recording: true },
            ToPage::FrameDialog {
                report: r#"{"kind":"alert"}"#.into(),
                origin: "http://127.0.0.1:2".into(),
            },
        ];
        let mut seen = Vec::new();
        for msg in to_page {
            let text = serde_json::to_string(&msg).unwrap();
            assert_eq!(
                serde_json::from_str::<ToPage>(&text).unwrap(),
                msg,
                "{text}"
            );
            seen.push(msg.type_name());
        }
        seen.dedup();
        assert_eq!(seen, TO_PAGE_TYPES);
    }

    /// The worker passes the server's page call on whole: its fields stay flat in the page's
    /// message, beside the tab the worker adds.
    #[test]
    fn a_page_op_carries_the_servers_call_flat() {
        let op = act_on(crate::page_ops::Ref { frame: 3, n: 1 });
        let call = PageCall {
            op: op.clone(),
            frame: 3,
            doc: Some("d".into()),
            origin: None,
            timeout_ms: 9,
            trusted_input: true,
            files: Vec::new(),
        };
        let wire = crate::ToExtension::PageOp {
            id: "i".into(),
            tab: Some(4),
            call,
        };
        let crate::ToExtension::PageOp { call, .. } =
            crate::ToExtension::decode(&wire.encode()).unwrap()
        else {
            panic!("a page_op decodes as one");
        };
        let message = ToPage::PageOp {
            id: "i".into(),
            tab: 4,
            // The worker hands on the files whose chunks it assembled (none here).
            call: call.with_files(Vec::new()),
        };
        let text = serde_json::to_string(&message).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"type": "page_op", "id": "i", "tab": 4, "frame": 3, "op": op,
                   "doc": "d", "timeout_ms": 9, "trusted_input": true})
        );
        assert_eq!(serde_json::from_str::<ToPage>(&text).unwrap(), message);
    }

    /// A click on ref `r`, as it travels.
    fn act_on(r: crate::page_ops::Ref) -> crate::page_ops::WireOp {
        crate::page_ops::WireOp::of(&crate::page_ops::PageOp::Act {
            target: crate::page_ops::Target::Ref(r),
            action: crate::page_ops::Action::Click,
            snapshot: false,
            dialog: None,
        })
    }

    #[test]
    fn a_call_result_is_forwarded_as_the_page_wrote_it() {
        let result = FromPage::CallToolResult {
            id: "c1".into(),
            result: json!([{"title": "a \"b\"", "n": 12222222222222222222222.5}]),
        };
        let text = serde_json::to_string(&result).unwrap();
        assert_eq!(CallAnswer::read(&text, "c1").unwrap(), CallAnswer::Result);
        // The page's text is the server's frame: both protocols write the message alike.
        let frame = crate::ToServer::CallToolResult {
            id: "c1".into(),
            result: json!([{"title": "a \"b\"", "n": 12222222222222222222222.5}]),
            navigated: None,
        };
        assert_eq!(text, frame.encode());
        // Another call's result, a second `id`, an extra field or broken JSON is decoded (and so
        // refused or answered as what it is).
        assert_eq!(
            CallAnswer::read(&text, "c2").unwrap(),
            CallAnswer::Message(result)
        );
        for odd in [
            r#"{"type":"call_tool_result","id":"c1","result":1,"id":"c2"}"#,
            r#"{"type":"call_tool_result","id":"c1","result":1,"tab":3}"#,
        ] {
            assert!(
                !matches!(CallAnswer::read(odd, "c1"), Ok(CallAnswer::Result)),
                "{odd}"
            );
        }
        assert!(
            CallAnswer::read(
                r#"{"type":"call_tool_result","id":"c1","result":[1,}"#,
                "c1"
            )
            .is_err()
        );
        let error =
            r#"{"type":"call_tool_error","id":"c1","error":{"code":"TIMEOUT","message":"t"}}"#;
        assert!(matches!(
            CallAnswer::read(error, "c1").unwrap(),
            CallAnswer::Message(FromPage::CallToolError { .. })
        ));
    }

    #[test]
    fn a_child_frames_answer_gives_its_result_only_when_it_is_one() {
        let result = FromPage::CallToolResult {
            id: "f1".into(),
            result: json!({"text": "- button \"Go\"", "n": 12222222222222222222222.5}),
        };
        assert_eq!(
            CallAnswer::result_of(&serde_json::to_string(&result).unwrap()),
            Some(json!({"text": "- button \"Go\"", "n": 12222222222222222222222.5}))
        );
        for other in [
            r#"{"type":"call_tool_error","id":"f1","error":{"code":"TIMEOUT","message":"t"}}"#,
            r#"{"type":"call_tool_result","id":"f1"}"#,
            r#"{"type":"call_tool_result","id":"f1","result":[1,}"#,
            r#"[{"type":"call_tool_result","result":1}]"#,
            "",
        ] {
            assert_eq!(CallAnswer::result_of(other), None, "{other}");
        }
    }

    #[test]
    fn page_messages_ignore_unknown_fields_and_name_what_is_wrong() {
        let msg: FromPage = serde_json::from_str(
            r#"{"extra":[1],"type":"state_update","state":1,"ts":2,"more":{}}"#,
        )
        .unwrap();
        assert_eq!(
            msg,
            FromPage::StateUpdate {
                state: json!(1),
                ts: 2
            }
        );
        let error = |text: &str| {
            serde_json::from_str::<FromPage>(text)
                .unwrap_err()
                .to_string()
        };
        let error_to_page = |text: &str| {
            serde_json::from_str::<ToPage>(text)
                .unwrap_err()
                .to_string()
        };
        assert!(
            error(r#"{"type":"call_tool_result","id":"a"}"#).contains("missing field `result`")
        );
        assert!(
            error(r#"{"type":"state_update","state":1,"ts":"soon"}"#)
                .contains("invalid type: string \"soon\", expected u64")
        );
        assert!(error(r#"{"id":"a"}"#).contains("missing field `type`"));
        let unknown = error(r#"{"type":"launch","id":"a"}"#);
        assert!(
            unknown.contains("unknown variant `launch`") && unknown.contains("page_ready"),
            "{unknown}"
        );
        assert!(error("[1]").contains("invalid type: sequence"));
        // The page decodes each adapter itself (and leaves out a bad one alone).
        let packed = serde_json::from_str::<ToPage>(
            r#"{"type":"adapters","adapters":[{"name":"a","match":[],"tools":[],"colour":1}]}"#,
        );
        assert!(
            matches!(packed, Ok(ToPage::Adapters { adapters, .. }) if adapters[0]["colour"] == 1)
        );
        let not_a_list = error_to_page(r#"{"type":"adapters","adapters":{}}"#);
        assert!(not_a_list.contains("invalid type: map"), "{not_a_list}");
    }
}
