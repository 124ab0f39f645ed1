//! The DOM as the step interpreter sees it: a small trait, so the interpreter runs against the
//! real page (`web_dom`) and against a fake on the host in tests.

use std::future::Future;

use serde_json::Value;

use crate::keys::KeyInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPhase {
    Down,
    Press,
    Up,
}

/// What a `fetch` got back (any status: the interpreter judges it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HttpResponse {
    pub status: u16,
    pub status_text: String,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// Why a `fetch` got no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchFailure {
    /// The browser's reason (network error, refused redirect, CORS, ...).
    Network(String),
    /// The body is longer than the cap (known from `Content-Length` or while reading).
    TooLarge,
}

pub trait Dom {
    type Node: Clone;

    /// The first element matching `selector` inside `scope` (the document when `None`);
    /// `Err` carries the browser's reason when the selector is invalid.
    fn query(
        &self,
        scope: Option<&Self::Node>,
        selector: &str,
    ) -> Result<Option<Self::Node>, String>;
    fn query_all(
        &self,
        scope: Option<&Self::Node>,
        selector: &str,
    ) -> Result<Vec<Self::Node>, String>;
    /// The document element (what a `read` without selector and scope reads).
    fn root(&self) -> Self::Node;
    fn same(&self, a: &Self::Node, b: &Self::Node) -> bool;

    fn text(&self, node: &Self::Node) -> String;
    /// The text of the element's own text-node children.
    fn own_text(&self, node: &Self::Node) -> String;
    /// A form control's value (`None`: the element has no `value`).
    fn value(&self, node: &Self::Node) -> Option<String>;
    fn attr(&self, node: &Self::Node, name: &str) -> Option<String>;
    /// A JS property as JSON (booleans, numbers, strings; anything else is `null`).
    fn prop(&self, node: &Self::Node, name: &str) -> Value;
    fn has_class(&self, node: &Self::Node, name: &str) -> bool;
    /// Attached, laid out (has client rects) and not `visibility: hidden`.
    fn is_visible(&self, node: &Self::Node) -> bool;
    /// An `<input>` whose value Enter commits with a `change` event.
    fn is_text_input(&self, node: &Self::Node) -> bool;
    fn active_element(&self) -> Option<Self::Node>;

    fn click(&self, node: &Self::Node);
    /// `dblclick` (after the two clicks a real double click fires).
    fn dblclick(&self, node: &Self::Node);
    /// `mouseover`, `mouseenter`, `mousemove`.
    fn hover(&self, node: &Self::Node);
    fn scroll_into_view(&self, node: &Self::Node);
    fn focus(&self, node: &Self::Node);
    /// Takes the focus away (`blur`, `focusout`).
    fn blur(&self, node: &Self::Node);
    /// A `<select>`'s options as (value, trimmed text); `None` when it is no `<select>`.
    fn options(&self, node: &Self::Node) -> Option<Vec<(String, String)>>;
    fn set_selected_index(&self, node: &Self::Node, index: usize);
    /// The root element of a same-origin `<iframe>`'s document.
    fn frame_root(&self, node: &Self::Node) -> Option<Self::Node>;
    /// Sets the value as typing would (the native setter, or the text of a contenteditable).
    /// `Err` when the element takes no text.
    fn set_value(&self, node: &Self::Node, value: &str) -> Result<(), String>;
    fn dispatch_input(&self, node: &Self::Node, data: &str);
    fn dispatch_change(&self, node: &Self::Node);
    /// What a browser does after Enter in a text field of a form (implicit submission): clicks the
    /// form's default button, or submits a form whose only text field this is. Nothing outside a form.
    fn submit_implicitly(&self, node: &Self::Node);
    /// Dispatches one keyboard event; returns `false` when a listener cancelled it.
    fn dispatch_key(&self, node: &Self::Node, phase: KeyPhase, key: &KeyInfo) -> bool;

    /// A same-origin GET of `path` (starting with `/`, checked), with the page's cookies and
    /// `Accept: accept`, reading at most `max_bytes` of the body. Dropping the future aborts
    /// the request (the interpreter does so on timeout and cancellation).
    fn fetch(
        &self,
        path: &str,
        accept: &str,
        max_bytes: usize,
    ) -> impl Future<Output = Result<HttpResponse, FetchFailure>>;

    fn now_ms(&self) -> f64;
    /// Resolves on the next DOM change or after `max_ms`, whichever comes first.
    fn settle(&self, max_ms: f64) -> impl Future<Output = ()>;
    /// Lets the page run what its handlers queued (microtasks and zero-delay timers: a framework's
    /// model updates and re-renders) before the next action, as it runs between two inputs of a person.
    fn checkpoint(&self) -> impl Future<Output = ()>;
}
