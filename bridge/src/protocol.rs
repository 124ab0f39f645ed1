//! Messages on the WebSocket between the `tabwire` server and the extension's service worker.
//!
//! Frames are JSON text tagged by `"type"`. Unknown fields are ignored; an unknown `type` or a
//! malformed frame decodes to a [`DecodeError`] that names what was wrong, so the receiver can
//! answer with an `error` message instead of dropping the socket.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::adapter::{Adapter, ToolAnnotations, ToolDef};
use crate::browser_ops::BrowserOp;
use crate::grants::{GrantChange, GrantList};
use crate::names::public_tool_name;
use crate::packed::PackedAdapter;
use crate::tagged;

/// A browser tab, as Chrome numbers it.
pub type TabId = u64;

/// Correlates a request with its answer (a UUID in text form).
pub type RequestId = String;

/// The closed set of failure codes a client can act on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    ElementNotFound,
    /// The element is there but a person could not act on it now: detached, disabled, read-only,
    /// or covered by another element (the message names which).
    NotActionable,
    /// The action was performed but the page did not take it (a value that did not change).
    NoEffect,
    Timeout,
    TabClosed,
    Navigated,
    NoSuchTool,
    NoSuchTab,
    InvalidArgs,
    NotConnected,
    AdapterError,
    /// The site refused what the call asked (a form it did not accept); the message is its own.
    Refused,
    PageCsp,
    Cancelled,
    TooLarge,
    /// A bound on what one side can make the other hold was reached (tabs, tools, pending calls).
    TooMany,
    /// The user has not allowed page tools (or trusted input) on this origin; the message says how.
    PermissionRequired,
    /// A page tool's ref names no element of the page now: it came from an older document, from
    /// another tab, or its element is gone. Take a new snapshot.
    StaleRef,
    /// The page opened a dialog (confirm, prompt, leave-page) the call had not said how to answer:
    /// it was dismissed, and the message names it and how to accept it.
    Dialog,
    /// The tab's page is frozen by a dialog waiting for a person's answer.
    DialogOpen,
    /// Trusted input (the origin's grant) could not go through Chrome's debugger: another
    /// debugger holds the tab, or the user cancelled Chrome's debugging bar; the message says
    /// which and how to go on.
    DebuggerUnavailable,
    /// A file the call names is not one the user lets calls upload: outside the uploads
    /// directory (through `..`, an absolute path, a symlink), missing, or not a file; the message
    /// names the file and the rule. Nothing was sent to the page.
    FileRefused,
    /// `browser_downloads`' `save` names no download of that tab (list them again).
    NoSuchDownload,
    /// The download cannot be saved yet or any more: still in progress, interrupted, or its
    /// file was deleted or changed since Chrome wrote it; the message says which.
    DownloadNotReady,
    /// The tab is held by another agent (it opened or claimed it); the message names it.
    TabHeld,
    /// The user stopped this agent in the popup: its calls are refused until allowed again.
    AgentStopped,
    /// The tab waits for the person (a hand-off): calls to it are refused until it is over.
    WaitingForPerson,
    /// The person cancelled the hand-off (or closed its window, or said no when asked).
    HandoffCancelled,
    /// The hand-off's time ran out before the person was done.
    HandoffTimeout,
    Protocol,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ElementNotFound => "ELEMENT_NOT_FOUND",
            ErrorCode::NotActionable => "NOT_ACTIONABLE",
            ErrorCode::NoEffect => "NO_EFFECT",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::TabClosed => "TAB_CLOSED",
            ErrorCode::Navigated => "NAVIGATED",
            ErrorCode::NoSuchTool => "NO_SUCH_TOOL",
            ErrorCode::NoSuchTab => "NO_SUCH_TAB",
            ErrorCode::InvalidArgs => "INVALID_ARGS",
            ErrorCode::NotConnected => "NOT_CONNECTED",
            ErrorCode::AdapterError => "ADAPTER_ERROR",
            ErrorCode::Refused => "REFUSED",
            ErrorCode::PageCsp => "PAGE_CSP",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::TooLarge => "TOO_LARGE",
            ErrorCode::TooMany => "TOO_MANY",
            ErrorCode::PermissionRequired => "PERMISSION_REQUIRED",
            ErrorCode::StaleRef => "STALE_REF",
            ErrorCode::Dialog => "DIALOG",
            ErrorCode::DialogOpen => "DIALOG_OPEN",
            ErrorCode::DebuggerUnavailable => "DEBUGGER_UNAVAILABLE",
            ErrorCode::FileRefused => "FILE_REFUSED",
            ErrorCode::NoSuchDownload => "NO_SUCH_DOWNLOAD",
            ErrorCode::DownloadNotReady => "DOWNLOAD_NOT_READY",
            ErrorCode::TabHeld => "TAB_HELD",
            ErrorCode::AgentStopped => "AGENT_STOPPED",
            ErrorCode::WaitingForPerson => "WAITING_FOR_PERSON",
            ErrorCode::HandoffCancelled => "HANDOFF_CANCELLED",
            ErrorCode::HandoffTimeout => "HANDOFF_TIMEOUT",
            ErrorCode::Protocol => "PROTOCOL",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure as it travels on the wire.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    pub code: ErrorCode,
    pub message: String,
    /// Whether what the call did before it failed may have changed the site (`maybe`: a form
    /// was submitted, a link followed): a client must check before it retries.
    #[serde(default, skip_serializing_if = "Effect::is_none")]
    pub effect: Effect,
}

/// What a failed call may have done to the site.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Nothing a retry would repeat (the failure came before any action that leaves the page).
    #[default]
    None,
    /// An action that submits or leaves the page ran: it may have been performed.
    Maybe,
}

impl Effect {
    pub fn is_none(&self) -> bool {
        *self == Effect::None
    }
}

/// What a person reads after an error whose action may have been performed.
pub const MAYBE_PERFORMED: &str =
    "the action may have been performed: check the site before retrying";

impl WireError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        WireError {
            code,
            message: message.into(),
            effect: Effect::None,
        }
    }

    /// The same failure, after an action that may have been performed.
    pub fn maybe_performed(mut self) -> Self {
        self.effect = Effect::Maybe;
        self
    }
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        match self.effect {
            Effect::None => Ok(()),
            Effect::Maybe => write!(f, " ({MAYBE_PERFORMED})"),
        }
    }
}

impl std::error::Error for WireError {}

/// What the browser says about itself in `hello`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct BrowserInfo {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub user_agent: String,
}

/// A tool as MCP clients see it: built by the server from the adapter that defines it
/// ([`ToolSpec::of`]), or from what a page registered itself ([`crate::webmcp`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The public name, `<adapter>_<tool>`, already sanitized to `[a-z0-9_]`.
    pub name: String,
    pub adapter: String,
    pub description: String,
    /// A short title for people (a client's tool list), when the tool's author gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub input_schema: Value,
    /// The adapter's schema for the call's `structuredContent`, when it declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub annotations: ToolAnnotations,
}

impl ToolSpec {
    /// The spec of `adapter`'s tool `tool`, in the adapter's own words.
    pub fn of(adapter: &Adapter, tool: &ToolDef) -> ToolSpec {
        ToolSpec {
            name: public_tool_name(&adapter.name, &tool.name),
            adapter: adapter.name.clone(),
            description: tool.description.clone(),
            title: None,
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            annotations: tool.annotations,
        }
    }
}

/// A tool a tab offers, as the page announces it: a tool of an adapter the server holds, by its
/// public name (the server has the adapter and builds its spec), or a tool described in full (one
/// the page registered itself through WebMCP; a hub's tabs as it mirrors them to a peer). Written
/// as the name (a string) or the spec (an object).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum OfferedTool {
    Adapter(String),
    Described(ToolSpec),
}

impl OfferedTool {
    /// The tool's public name.
    pub fn name(&self) -> &str {
        match self {
            OfferedTool::Adapter(name) => name,
            OfferedTool::Described(spec) => &spec.name,
        }
    }
}

/// Through a `Value`, like every message: serde's untagged enums buffer their input.
impl<'de> Deserialize<'de> for OfferedTool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(name) => Ok(OfferedTool::Adapter(name)),
            spec => serde_json::from_value(spec)
                .map(OfferedTool::Described)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// Which build of the content-script runtime runs in a page: the wasm module, or its wasm2js
/// translation (the fallback on pages whose CSP forbids compiling wasm).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeKind {
    Wasm,
    Js,
}

/// A tab and the tools it currently offers.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TabTools {
    pub tab: TabId,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub tools: Vec<OfferedTool>,
    /// Which injector build runs in the tab, once it said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeKind>,
}

/// What the extension saw of a page it opened for `open_tab` with `wait_loaded_ms`, once the
/// page had finished loading.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LoadedPage {
    /// Tabwire's runtime runs, or is starting, in the page (an adapter matched, or the page
    /// registered WebMCP tools while loading): it will announce the page's tools.
    #[serde(default)]
    pub runtime: bool,
}

tagged::tagged_enum! {
    /// Messages the extension sends to the server. `Deserialize` is written by
    /// [`tagged::tagged_enum!`], field by field (see [`crate::tagged`] for why).
    #[derive(Serialize, Clone, Debug, PartialEq)]
    pub enum ToServer by "type", listed in TO_SERVER_TYPES {
        "hello" => Hello {
            protocol: u32,
            #[serde(default)]
            extension_version: String,
            /// Stable per browser profile, so the server can tell browsers apart.
            #[serde(default)]
            instance_id: String,
            #[serde(default)]
            browser: BrowserInfo,
            /// The declarations of the code adapters the extension bundles: the server validates
            /// them, builds their tools' specs, and knows which URLs they serve.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            code_adapters: Vec<PackedAdapter>,
        },
        /// The tools of one tab changed (an empty list: the tab has none any more).
        "tools_updated" => ToolsUpdated(TabTools),
        /// The full state, sent after every (re)connect.
        "tools_snapshot" => ToolsSnapshot {
            tabs: Vec<TabTools>,
        },
        "call_tool_result" => CallToolResult {
            id: RequestId,
            result: Value,
            /// The call's last step loaded another page: where it landed (the answer waited for it).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            navigated: Option<String>,
        },
        "call_tool_error" => CallToolError {
            id: RequestId,
            error: WireError,
        },
        "progress" => Progress {
            id: RequestId,
            #[serde(default)]
            message: Option<String>,
            #[serde(default)]
            progress: Option<f64>,
            #[serde(default)]
            total: Option<f64>,
        },
        "state_update" => StateUpdate {
            tab: TabId,
            state: Value,
            ts: u64,
        },
        "state_response" => StateResponse {
            id: RequestId,
            state: Value,
        },
        "state_error" => StateError {
            id: RequestId,
            error: WireError,
        },
        "open_tab_result" => OpenTabResult {
            id: RequestId,
            tab: TabId,
            /// Present when the page finished loading within `open_tab`'s `wait_loaded_ms`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            loaded: Option<LoadedPage>,
        },
        "open_tab_error" => OpenTabError {
            id: RequestId,
            error: WireError,
        },
        /// The answer to `browser` request `id` (see [`crate::browser_ops`] for each op's answer).
        "browser_result" => BrowserResult {
            id: RequestId,
            result: Value,
        },
        "browser_error" => BrowserError {
            id: RequestId,
            error: WireError,
        },
        "tab_focused" => TabFocused {
            tab: TabId,
        },
        "tab_closed" => TabClosed {
            tab: TabId,
        },
        "tab_navigated" => TabNavigated {
            tab: TabId,
            url: String,
        },
        /// The user asked, in the popup, to change a grant (`tab`: the tab the popup showed). The
        /// worker checked it ([`GrantChange::check`]); the server checks it again, writes it, and
        /// answers `grant_result` or `grant_error`.
        "change_grant" => ChangeGrant {
            id: RequestId,
            change: GrantChange,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            tab: Option<TabId>,
        },
        /// The person stopped agent `agent` in the popup (`stop`), or let it go on (issue 28).
        "agent_control" => AgentControl {
            agent: String,
            stop: bool,
        },
        /// The person shared tab `tab` from the popup: no agent holds it any more (issue 28).
        "share_tab" => ShareTab {
            tab: TabId,
        },
        /// The user stopped a recording in the popup and named its tool: `steps` as the pages of
        /// `tab` recorded them on `origin` (checked by the worker against what the tab shows). The
        /// server drafts the tool ([`crate::recording`]), saves it to the user's adapter for the
        /// site and loads it; answers `recording_saved` or `recording_error`.
        "save_recording" => SaveRecording {
            id: RequestId,
            tab: TabId,
            origin: String,
            /// The page the recording started on: the tool opens it first.
            start_url: String,
            tool: crate::recording::ToolDraft,
            steps: Vec<crate::recording::RecordedStep>,
        },
        "ping" => Ping {
            #[serde(default)]
            nonce: u64,
        },
        "pong" => Pong {
            #[serde(default)]
            nonce: u64,
        },
        "error" => Error {
            #[serde(default)]
            in_reply_to: Option<RequestId>,
            error: WireError,
        },
    }
}

tagged::tagged_enum! {
    /// Messages the server sends to the extension. `Deserialize` is written by
    /// [`tagged::tagged_enum!`], field by field (see [`crate::tagged`] for why).
    #[derive(Serialize, Clone, Debug, PartialEq)]
    pub enum ToExtension by "type", listed in TO_EXTENSION_TYPES {
        "welcome" => Welcome {
            protocol: u32,
            server_version: String,
            instance_id: String,
            adapters: Vec<PackedAdapter>,
            /// The code adapters `hello` declared that validated, as adapters: the worker gives pages
            /// these (the one validator, and the one adapter model, are the server's).
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            code_adapters: Vec<PackedAdapter>,
        },
        "adapters_updated" => AdaptersUpdated {
            adapters: Vec<PackedAdapter>,
        },
        "call_tool" => CallTool {
            id: RequestId,
            tab: TabId,
            tool: String,
            args: Value,
            timeout_ms: u64,
            /// Whether the call's input goes through Chrome's debugger (the origin's trusted-input
            /// grant, which only the server knows).
            #[serde(default, skip_serializing_if = "std::ops::Not::not")]
            trusted_input: bool,
            /// Files the call puts on the page, read by the server from the user's uploads
            /// directory: their bytes follow in `upload_chunk` frames ([`crate::upload`]).
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            files: Vec<crate::upload::DeclaredFile>,
        },
        /// Piece `index` of file `file` (by its place in the call's `files`) of call `id`: at most
        /// [`crate::upload::CHUNK_BASE64`] characters of its base64, sent after the call.
        "upload_chunk" => UploadChunk {
            id: RequestId,
            file: usize,
            index: usize,
            data: String,
        },
        "cancel" => Cancel {
            id: RequestId,
        },
        "request_state" => RequestState {
            id: RequestId,
            tab: TabId,
        },
        /// A page tool's call in `tab` (absent: the focused tab), whose runtime the extension
        /// injects first where it does not run; answered like `call_tool`.
        "page_op" => PageOp {
            id: RequestId,
            #[serde(default)]
            tab: Option<TabId>,
            /// Its fields are the message's own; its files' bytes follow in `upload_chunk` frames
            /// ([`crate::upload`]).
            #[serde(flatten)]
            call: crate::page::PageCall<crate::upload::DeclaredFile>,
        },
        /// Navigate `tab` to `url`, or open a new tab when `tab` is absent.
        "open_tab" => OpenTab {
            id: RequestId,
            url: String,
            #[serde(default)]
            tab: Option<TabId>,
            /// Answer once the page has finished loading (at most this long), saying so in `loaded`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            wait_loaded_ms: Option<u64>,
        },
        /// Something the worker does to the browser itself (list tabs, navigate, capture).
        "browser" => Browser {
            id: RequestId,
            op: BrowserOp,
        },
        /// Every grant, after `welcome` and whenever they change (whoever changed them): what the
        /// popup shows. `all_origins`: this tabwire runs with `--allow-all-origins`.
        "grants" => Grants {
            grants: GrantList,
            #[serde(default)]
            all_origins: bool,
        },
        /// Every live agent with the tabs it holds (issue 28), after `welcome` and whenever it
        /// changes: the popup lists them, the worker groups each one's tabs under its name.
        "agents" => Agents {
            agents: Vec<crate::agents::AgentView>,
        },
        /// `change_grant` `id` was made (`changed`: it changed something).
        "grant_result" => GrantResult {
            id: RequestId,
            changed: bool,
        },
        "grant_error" => GrantError {
            id: RequestId,
            error: WireError,
        },
        /// `save_recording` `id` was saved: `tool` is its public name, `file` the adapter file
        /// written, `parameters` what a call passes (the typed values, in order).
        "recording_saved" => RecordingSaved {
            id: RequestId,
            tool: String,
            file: String,
            parameters: Vec<String>,
        },
        "recording_error" => RecordingError {
            id: RequestId,
            error: WireError,
        },
        "ping" => Ping {
            #[serde(default)]
            nonce: u64,
        },
        "pong" => Pong {
            #[serde(default)]
            nonce: u64,
        },
        "error" => Error {
            #[serde(default)]
            in_reply_to: Option<RequestId>,
            error: WireError,
        },
    }
}

/// Why a frame could not be decoded. `request_id` is the frame's `id`, when it had one, so the
/// receiver can fail that request instead of leaving it to time out.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    #[error("frame is not JSON: {0}")]
    NotJson(String),
    #[error("frame is {0} bytes, over the limit of {1} bytes")]
    TooLarge(usize, usize),
    #[error("frame is not a JSON object with a string \"type\"")]
    MissingType,
    #[error("unknown message type {0:?}")]
    UnknownType(String),
    #[error("malformed {kind:?} message: {reason}")]
    Invalid { kind: String, reason: String },
}

/// A frame that failed to decode, with the request id it carried (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct Undecodable {
    pub error: DecodeError,
    pub request_id: Option<RequestId>,
}

impl Undecodable {
    /// The `error` reply the receiver sends back.
    pub fn to_wire_error(&self) -> WireError {
        WireError::new(ErrorCode::Protocol, self.error.to_string())
    }
}

fn decode<T>(
    text: &str,
    known: &[&str],
    from_value: fn(Value) -> Result<T, serde_json::Error>,
) -> Result<T, Undecodable> {
    if text.len() > crate::MAX_MESSAGE_BYTES {
        return Err(Undecodable {
            error: DecodeError::TooLarge(text.len(), crate::MAX_MESSAGE_BYTES),
            request_id: None,
        });
    }
    let value: Value = serde_json::from_str(text).map_err(|e| Undecodable {
        error: DecodeError::NotJson(e.to_string()),
        request_id: None,
    })?;
    let request_id = value.get("id").and_then(Value::as_str).map(str::to_owned);
    let fail = |error| Undecodable {
        error,
        request_id: request_id.clone(),
    };
    let kind = match value.get("type").and_then(Value::as_str) {
        Some(kind) => kind.to_owned(),
        None => return Err(fail(DecodeError::MissingType)),
    };
    if !known.contains(&kind.as_str()) {
        return Err(fail(DecodeError::UnknownType(kind)));
    }
    from_value(value).map_err(|e| {
        fail(DecodeError::Invalid {
            kind,
            reason: e.to_string(),
        })
    })
}

impl ToServer {
    pub fn decode(text: &str) -> Result<Self, Undecodable> {
        decode(text, TO_SERVER_TYPES, ToServer::from_value)
    }

    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("wire messages always serialize")
    }
}

impl ToExtension {
    pub fn decode(text: &str) -> Result<Self, Undecodable> {
        decode(text, TO_EXTENSION_TYPES, ToExtension::from_value)
    }

    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("wire messages always serialize")
    }
}

#[cfg(test)]
mod tests;
