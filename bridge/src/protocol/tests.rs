//! The wire protocol's tests: each message's golden encoding both ways, and bad frames' errors.

use super::*;
use crate::grants::{Grant, GrantAction, Need};
use serde_json::json;

fn golden_to_server(msg: ToServer, expected: Value) {
    let encoded: Value = serde_json::from_str(&msg.encode()).unwrap();
    assert_eq!(encoded, expected, "encoding of {msg:?}");
    assert_eq!(ToServer::decode(&expected.to_string()).unwrap(), msg);
}

fn golden_to_extension(msg: ToExtension, expected: Value) {
    let encoded: Value = serde_json::from_str(&msg.encode()).unwrap();
    assert_eq!(encoded, expected, "encoding of {msg:?}");
    assert_eq!(ToExtension::decode(&expected.to_string()).unwrap(), msg);
}

#[test]
fn hello_golden() {
    golden_to_server(
        ToServer::Hello {
            protocol: 1,
            extension_version: "0.1.0".into(),
            instance_id: "i1".into(),
            browser: BrowserInfo {
                name: "Chromium".into(),
                version: "156".into(),
                user_agent: "UA".into(),
            },
            code_adapters: vec![],
        },
        json!({"type":"hello","protocol":1,"extension_version":"0.1.0","instance_id":"i1",
               "browser":{"name":"Chromium","version":"156","user_agent":"UA"}}),
    );
    // Code adapters travel as their declarations, as the bundle has them.
    let declaration = json!({"name": "listcode", "match": ["http://127.0.0.1/*"],
                             "tools": [{"name": "count", "description": "Count."}]});
    golden_to_server(
        ToServer::Hello {
            protocol: 3,
            extension_version: String::new(),
            instance_id: String::new(),
            browser: BrowserInfo::default(),
            code_adapters: vec![PackedAdapter::from_json(declaration.clone()).unwrap()],
        },
        json!({"type":"hello","protocol":3,"extension_version":"","instance_id":"",
               "browser":{"name":"","version":"","user_agent":""},
               "code_adapters":[declaration]}),
    );
    golden_to_server(
        ToServer::OpenTabResult {
            id: "o".into(),
            tab: 3,
            loaded: Some(LoadedPage { runtime: true }),
        },
        json!({"type":"open_tab_result","id":"o","tab":3,"loaded":{"runtime":true}}),
    );
    golden_to_extension(
        ToExtension::OpenTab {
            id: "o".into(),
            url: "http://x/".into(),
            tab: None,
            wait_loaded_ms: Some(900),
        },
        json!({"type":"open_tab","id":"o","url":"http://x/","tab":null,"wait_loaded_ms":900}),
    );
}

/// Adapter tools travel by name, tools the page described itself in full.
#[test]
fn tools_updated_is_flat_and_names_adapter_tools() {
    golden_to_server(
        ToServer::ToolsUpdated(TabTools {
            tab: 7,
            url: "http://127.0.0.1/".into(),
            title: "T".into(),
            tools: vec![
                OfferedTool::Adapter("todomvc_add_todo".into()),
                OfferedTool::Described(ToolSpec {
                    name: "webmcp_127_0_0_1_hello".into(),
                    adapter: "webmcp".into(),
                    description: "Hi".into(),
                    title: None,
                    input_schema: json!({"type":"object"}),
                    output_schema: None,
                    annotations: ToolAnnotations::default(),
                }),
            ],
            runtime: Some(RuntimeKind::Js),
        }),
        json!({"type":"tools_updated","tab":7,"url":"http://127.0.0.1/","title":"T",
               "tools":["todomvc_add_todo",
                        {"name":"webmcp_127_0_0_1_hello","adapter":"webmcp","description":"Hi",
                         "input_schema":{"type":"object"},
                         "annotations":{"read_only":false,"destructive":false,"idempotent":false}}],
               "runtime":"js"}),
    );
    let bad = ToServer::decode(r#"{"type":"tools_updated","tab":1,"tools":[7]}"#).unwrap_err();
    assert!(
        matches!(&bad.error, DecodeError::Invalid { reason, .. } if reason.contains("invalid type: integer `7`")),
        "{bad:?}"
    );
}

#[test]
fn a_tool_spec_is_the_adapters_words() {
    let adapter = crate::adapter::parse_adapter(include_str!("../../../adapters/todomvc.json"))
        .expect("the shipped adapter");
    let tool = adapter.tool_named("todomvc_list_todos").unwrap();
    let spec = ToolSpec::of(&adapter, tool);
    assert_eq!(spec.name, "todomvc_list_todos");
    assert_eq!(spec.adapter, "todomvc");
    assert_eq!(spec.description, tool.description);
    assert_eq!(spec.input_schema, tool.input_schema);
    assert_eq!(spec.output_schema, tool.output_schema);
    assert!(spec.annotations.read_only);
}

#[test]
fn a_tools_output_schema_is_carried_when_declared() {
    golden_to_server(
        ToServer::ToolsUpdated(TabTools {
            tab: 7,
            url: String::new(),
            title: String::new(),
            tools: vec![OfferedTool::Described(ToolSpec {
                name: "todomvc_list_todos".into(),
                adapter: "todomvc".into(),
                description: "List".into(),
                title: None,
                input_schema: json!({"type":"object"}),
                output_schema: Some(json!({"type":"object","required":["result"]})),
                annotations: ToolAnnotations::default(),
            })],
            runtime: None,
        }),
        json!({"type":"tools_updated","tab":7,"url":"","title":"",
               "tools":[{"name":"todomvc_list_todos","adapter":"todomvc","description":"List",
                         "input_schema":{"type":"object"},
                         "output_schema":{"type":"object","required":["result"]},
                         "annotations":{"read_only":false,"destructive":false,"idempotent":false}}]}),
    );
}

#[test]
fn call_messages_golden() {
    golden_to_extension(
        ToExtension::CallTool {
            id: "u1".into(),
            tab: 3,
            tool: "todomvc_list_todos".into(),
            args: json!({}),
            timeout_ms: 5000,
            trusted_input: false,
            files: Vec::new(),
        },
        json!({"type":"call_tool","id":"u1","tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":5000}),
    );
    golden_to_server(
        ToServer::CallToolError {
            id: "u1".into(),
            error: WireError::new(ErrorCode::ElementNotFound, "no .x"),
        },
        json!({"type":"call_tool_error","id":"u1","error":{"code":"ELEMENT_NOT_FOUND","message":"no .x"}}),
    );
    golden_to_server(
        ToServer::CallToolResult {
            id: "u1".into(),
            result: json!([1, 2]),
            navigated: None,
        },
        json!({"type":"call_tool_result","id":"u1","result":[1,2]}),
    );
    golden_to_server(
        ToServer::CallToolResult {
            id: "u2".into(),
            result: json!({"id": 7}),
            navigated: Some("http://127.0.0.1:8000/ticket/7".into()),
        },
        json!({"type":"call_tool_result","id":"u2","result":{"id":7},"navigated":"http://127.0.0.1:8000/ticket/7"}),
    );
    golden_to_server(
        ToServer::CallToolError {
            id: "u3".into(),
            error: WireError::new(ErrorCode::Timeout, "the page did not land").maybe_performed(),
        },
        json!({"type":"call_tool_error","id":"u3","error":{"code":"TIMEOUT","message":"the page did not land","effect":"maybe"}}),
    );
}

/// The page call's fields are the message's own (flat), as before it was one struct; its
/// operation travels as the server read it (`page_ops::WireOp`), its ref's frame beside it.
#[test]
fn page_op_golden() {
    use crate::page_ops::{Action, PageOp, Ref, Target, WireOp};
    let click = PageOp::Act {
        target: Target::Ref(Ref { frame: 7, n: 4 }),
        action: Action::Click,
        snapshot: false,
        dialog: None,
    };
    golden_to_extension(
        ToExtension::PageOp {
            id: "p1".into(),
            tab: Some(3),
            call: crate::page::PageCall {
                op: WireOp::of(&click),
                frame: 7,
                doc: Some("d2".into()),
                origin: Some("http://127.0.0.1:8000".into()),
                timeout_ms: 5000,
                trusted_input: true,
                files: Vec::new(),
            },
        },
        json!({"type":"page_op","id":"p1","tab":3,
               "op":{"tool":"page_act","target":{"ref":"f7e4"},"action":{"do":"click"},
                     "snapshot":false,"dialog":null},
               "frame":7,"doc":"d2","origin":"http://127.0.0.1:8000","timeout_ms":5000,"trusted_input":true}),
    );
    golden_to_extension(
        ToExtension::PageOp {
            id: "p2".into(),
            tab: None,
            call: crate::page::PageCall {
                op: WireOp::whole_snapshot(900),
                frame: 0,
                doc: None,
                origin: None,
                timeout_ms: 10,
                trusted_input: false,
                files: Vec::new(),
            },
        },
        json!({"type":"page_op","id":"p2","tab":null,
               "op":{"tool":"page_snapshot","within":null,"max_chars":900,"cursor":0},"timeout_ms":10}),
    );
    // A call missing one of its own fields names it, like any message's, with the request's id.
    let bad = ToExtension::decode(r#"{"type":"page_op","id":"p3","args":{},"timeout_ms":1}"#)
        .unwrap_err();
    assert!(
        matches!(&bad.error, DecodeError::Invalid { kind, reason } if kind == "page_op" && reason.contains("missing field `op`")),
        "{bad:?}"
    );
    assert_eq!(bad.request_id.as_deref(), Some("p3"));
}

#[test]
fn every_known_type_round_trips() {
    let samples = [
        ToServer::Hello {
            protocol: 1,
            extension_version: String::new(),
            instance_id: "i".into(),
            browser: BrowserInfo::default(),
            code_adapters: vec![
                PackedAdapter::from_json(
                    json!({"name": "notes", "match": ["http://127.0.0.1/*"], "tools": []}),
                )
                .unwrap(),
            ],
        },
        ToServer::ToolsUpdated(TabTools {
            tab: 1,
            url: "u".into(),
            title: String::new(),
            tools: vec![],
            runtime: Some(RuntimeKind::Wasm),
        }),
        ToServer::CallToolResult {
            id: "a".into(),
            result: json!({"x": [1.5, null]}),
            navigated: None,
        },
        ToServer::CallToolError {
            id: "a".into(),
            error: WireError::new(ErrorCode::TabClosed, "gone"),
        },
        ToServer::ToolsSnapshot { tabs: vec![] },
        ToServer::Progress {
            id: "a".into(),
            message: Some("m".into()),
            progress: Some(1.0),
            total: None,
        },
        ToServer::StateUpdate {
            tab: 1,
            state: json!({"n":1}),
            ts: 5,
        },
        ToServer::StateResponse {
            id: "a".into(),
            state: json!(null),
        },
        ToServer::StateError {
            id: "a".into(),
            error: WireError::new(ErrorCode::Timeout, "t"),
        },
        ToServer::OpenTabResult {
            id: "a".into(),
            tab: 2,
            loaded: Some(LoadedPage { runtime: true }),
        },
        ToServer::OpenTabError {
            id: "a".into(),
            error: WireError::new(ErrorCode::Internal, "x"),
        },
        ToServer::BrowserResult {
            id: "a".into(),
            result: json!({"tabs": []}),
        },
        ToServer::BrowserError {
            id: "a".into(),
            error: WireError::new(ErrorCode::PermissionRequired, "allow it"),
        },
        ToServer::TabFocused { tab: 1 },
        ToServer::TabClosed { tab: 1 },
        ToServer::TabNavigated {
            tab: 1,
            url: "u".into(),
        },
        ToServer::ChangeGrant {
            id: "g".into(),
            change: GrantChange {
                origin: "https://a.example".into(),
                action: GrantAction::Allow,
                need: Need::PageTools,
            },
            tab: Some(4),
        },
        ToServer::AgentControl {
            agent: "claude-code-2".into(),
            stop: true,
        },
        ToServer::ShareTab { tab: 4 },
        ToServer::SaveRecording {
            id: "r".into(),
            tab: 4,
            origin: "https://a.example".into(),
            start_url: "https://a.example/books".into(),
            tool: crate::recording::ToolDraft {
                name: "add_book".into(),
                description: "Adds a book.".into(),
            },
            steps: vec![crate::recording::RecordedStep::Click {
                target: "role=button[name=\"Add\"]".into(),
            }],
        },
        ToServer::Ping { nonce: 9 },
        ToServer::Pong { nonce: 9 },
        ToServer::Error {
            in_reply_to: None,
            error: WireError::new(ErrorCode::Protocol, "p"),
        },
    ];
    each_type_round_trips(samples, TO_SERVER_TYPES, ToServer::type_name, |msg| {
        ToServer::decode(&msg.encode()).unwrap()
    });
    let samples = [
        ToExtension::Welcome {
            protocol: 1,
            server_version: "0.1.0".into(),
            instance_id: "s".into(),
            adapters: vec![],
            code_adapters: vec![],
        },
        ToExtension::AdaptersUpdated { adapters: vec![] },
        ToExtension::CallTool {
            id: "a".into(),
            tab: 2,
            tool: "t".into(),
            args: json!({}),
            timeout_ms: 1,
            trusted_input: true,
            files: Vec::new(),
        },
        ToExtension::Cancel { id: "a".into() },
        ToExtension::RequestState {
            id: "a".into(),
            tab: 1,
        },
        ToExtension::PageOp {
            id: "p".into(),
            tab: None,
            call: crate::page::PageCall {
                op: crate::page_ops::WireOp::whole_snapshot(900),
                frame: 0,
                doc: Some("d1".into()),
                origin: Some("http://127.0.0.1:8000".into()),
                timeout_ms: 5,
                trusted_input: true,
                files: vec![crate::upload::DeclaredFile {
                    name: "docs/cv.pdf".into(),
                    mime: "application/pdf".into(),
                    size: 4,
                }],
            },
        },
        ToExtension::UploadChunk {
            id: "p".into(),
            file: 0,
            index: 0,
            data: "JVBERg==".into(),
        },
        ToExtension::OpenTab {
            id: "a".into(),
            url: "u".into(),
            tab: None,
            wait_loaded_ms: Some(3000),
        },
        ToExtension::Browser {
            id: "a".into(),
            op: crate::browser_ops::BrowserOp::ListTabs,
        },
        ToExtension::Grants {
            grants: [(
                crate::Origin::parse("https://a.example").unwrap(),
                Grant {
                    page_tools: true,
                    trusted_input: false,
                    since: 7,
                },
            )]
            .into(),
            all_origins: false,
        },
        ToExtension::Agents {
            agents: vec![crate::agents::AgentView {
                name: "claude-code".into(),
                client: "Claude Code".into(),
                stopped: false,
                tabs: vec![4, 7],
                running: 1,
            }],
        },
        ToExtension::GrantResult {
            id: "g".into(),
            changed: true,
        },
        ToExtension::GrantError {
            id: "g".into(),
            error: WireError::new(ErrorCode::InvalidArgs, "not an origin"),
        },
        ToExtension::RecordingSaved {
            id: "r".into(),
            tool: "a_example_add_book".into(),
            file: "/home/u/.config/tabwire/adapters/a_example.json".into(),
            parameters: vec!["title".into()],
        },
        ToExtension::RecordingError {
            id: "r".into(),
            error: WireError::new(ErrorCode::InvalidArgs, "the name is taken"),
        },
        ToExtension::Ping { nonce: 1 },
        ToExtension::Pong { nonce: 1 },
        ToExtension::Error {
            in_reply_to: Some("a".into()),
            error: WireError::new(ErrorCode::Protocol, "p"),
        },
    ];
    each_type_round_trips(samples, TO_EXTENSION_TYPES, ToExtension::type_name, |msg| {
        ToExtension::decode(&msg.encode()).unwrap()
    });
}

/// Each sample is written with its `type_name` and comes back the same from `round_trip`, and
/// there is one sample per variant (`type_name` is exhaustive): every type of `known` decodes.
fn each_type_round_trips<M: PartialEq + std::fmt::Debug + serde::Serialize>(
    samples: impl IntoIterator<Item = M>,
    known: &[&str],
    type_name: fn(&M) -> &'static str,
    round_trip: impl Fn(&M) -> M,
) {
    let mut seen = Vec::new();
    for msg in samples {
        let kind = serde_json::to_value(&msg).unwrap()["type"].clone();
        assert!(known.contains(&kind.as_str().unwrap()), "{kind}");
        assert_eq!(kind, type_name(&msg));
        assert_eq!(round_trip(&msg), msg);
        seen.push(type_name(&msg));
    }
    seen.sort_unstable();
    let mut known = known.to_vec();
    known.sort_unstable();
    assert_eq!(seen, known);
}

/// Found by fuzzing: without serde_json's exact float parsing, a huge integer in a page's result
/// changed value on every hop (decode → encode → decode).
#[test]
fn numbers_pass_through_unchanged() {
    let frame = r#"{"type":"call_tool_result","id":"a","result":[1222222222222222222222222222222222222222222222222222222222222,2.5e-308,0.1]}"#;
    let once = ToServer::decode(frame).unwrap();
    assert_eq!(ToServer::decode(&once.encode()).unwrap(), once);
}

#[test]
fn unknown_fields_are_ignored() {
    let msg = ToServer::decode(r#"{"type":"tab_closed","tab":4,"extra":{"x":1}}"#).unwrap();
    assert_eq!(msg, ToServer::TabClosed { tab: 4 });
}

#[test]
fn bad_frames_name_what_is_wrong() {
    let err = ToServer::decode("not json").unwrap_err();
    assert!(matches!(err.error, DecodeError::NotJson(_)));
    let err = ToServer::decode(r#"{"tab":1}"#).unwrap_err();
    assert_eq!(err.error, DecodeError::MissingType);
    let err = ToServer::decode(r#"{"type":"launch_missiles","id":"r9"}"#).unwrap_err();
    assert_eq!(
        err.error,
        DecodeError::UnknownType("launch_missiles".into())
    );
    assert_eq!(err.request_id.as_deref(), Some("r9"));
    let err = ToServer::decode(r#"{"type":"call_tool_result","id":"r1"}"#).unwrap_err();
    assert!(
        matches!(&err.error, DecodeError::Invalid { kind, reason } if kind == "call_tool_result" && reason.contains("result")),
        "{err:?}"
    );
    assert_eq!(err.request_id.as_deref(), Some("r1"));
    assert_eq!(err.to_wire_error().code, ErrorCode::Protocol);
}

#[test]
fn oversized_frames_are_refused_before_parsing() {
    let big = format!(
        r#"{{"type":"ping","pad":"{}"}}"#,
        "x".repeat(crate::MAX_MESSAGE_BYTES)
    );
    let err = ToServer::decode(&big).unwrap_err();
    assert!(matches!(err.error, DecodeError::TooLarge(..)));
}

#[test]
fn error_codes_are_screaming_snake() {
    for code in [
        ErrorCode::ElementNotFound,
        ErrorCode::NotActionable,
        ErrorCode::NoEffect,
        ErrorCode::TabClosed,
        ErrorCode::NoSuchTool,
        ErrorCode::PageCsp,
        ErrorCode::NotConnected,
        ErrorCode::DebuggerUnavailable,
    ] {
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
    }
}
