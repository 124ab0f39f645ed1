//! The DOM as the step interpreter sees it: a small trait, so the interpreter runs against the
//! real page (`web/dom.rs`) and against a fake on the host in tests.

use std::future::Future;
use std::rc::Rc;

use serde_json::Value;

use bridge::keys::Platform;
use bridge::upload::UploadFile;

use crate::input::{Edit, Geometry, KeyEvent, MouseEvent, Point, TextEntry};

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

/// Whether the page is on its way to another document, as far as the runtime sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Leaving {
    #[default]
    Staying,
    /// A form was submitted (its `submit` event not cancelled) and the navigation it plans has
    /// not started yet.
    Submitting,
    /// The page started loading another document (not a fragment change, not a download):
    /// where to.
    To(String),
}

pub trait Dom {
    type Node: Clone;
    /// A watch for changes of the document (see [`Dom::watch`]).
    type Watch;

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
    /// The text as rendered (`innerText`): line breaks between blocks and at `<br>`, spaces as
    /// the element's `white-space` keeps them; what an edit's read-back compares in an editor.
    fn rendered_text(&self, node: &Self::Node) -> String;
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

    /// Scrolls the element to the middle of the view (instantly).
    fn scroll_into_view(&self, node: &Self::Node);
    fn focus(&self, node: &Self::Node);
    /// Takes the focus away (`blur`, `focusout`).
    fn blur(&self, node: &Self::Node);

    // ----- what the input module asks (crate::input) ----------------------------------------

    /// The parent element (`None` at the document element).
    fn parent(&self, node: &Self::Node) -> Option<Self::Node>;
    /// Whether `node` is `ancestor` or inside it.
    fn contains(&self, ancestor: &Self::Node, node: &Self::Node) -> bool;
    /// The lower-case tag name (`button`).
    fn tag_name(&self, node: &Self::Node) -> String;
    fn is_connected(&self, node: &Self::Node) -> bool;
    /// A disabled form control (`:disabled`), or inside an `aria-disabled="true"` element.
    fn is_disabled(&self, node: &Self::Node) -> bool;
    /// Where a pointer would hit the element, in its document's viewport coordinates.
    fn geometry(&self, node: &Self::Node) -> Geometry;
    /// The element at `point` of `node`'s document (`elementFromPoint`).
    fn element_at(&self, node: &Self::Node, point: Point) -> Option<Self::Node>;
    /// The form control a `<label>` is for.
    fn label_control(&self, label: &Self::Node) -> Option<Self::Node>;
    /// Whether the element is its document's focused element.
    fn has_focus(&self, node: &Self::Node) -> bool;
    /// The element the synthetic pointer is over (kept for the page's lifetime, across calls).
    fn pointer_at(&self) -> Option<Self::Node>;
    fn set_pointer_at(&self, node: Option<Self::Node>);
    /// The page's platform, which decides what `Mod` in a chord means.
    fn platform(&self) -> Platform;
    /// Dispatches one pointer or mouse event; `false` when a listener cancelled it.
    fn dispatch_mouse(&self, node: &Self::Node, event: &MouseEvent) -> bool;
    /// Dispatches one keyboard event; `false` when a listener cancelled it.
    fn dispatch_key(&self, node: &Self::Node, event: &KeyEvent) -> bool;
    /// The element that takes text for `node` (itself, its editing host, or the first text entry
    /// inside it), and how it takes it; `None` when there is none.
    fn text_entry(&self, node: &Self::Node) -> Option<(TextEntry, Self::Node)>;
    /// A text control's `readOnly`.
    fn is_read_only(&self, node: &Self::Node) -> bool;
    /// Dispatches `beforeinput` (with the selection as its target range); `false` when cancelled.
    fn before_input(&self, node: &Self::Node, edit: &Edit) -> bool;
    /// Dispatches `textInput` with `text`, the event Chromium fires between `beforeinput` and the
    /// insertion of typed text (and of Enter's line break: `"\n"`); React's `onBeforeInput` is
    /// made from it, so Draft.js takes typing from it. `false` when cancelled.
    fn text_input(&self, node: &Self::Node, text: &str) -> bool;
    /// Dispatches `input`, as the browser does after it changed a text control.
    fn input_event(&self, node: &Self::Node, edit: &Edit);
    /// Sets a text control's value through the browser's own setter (whatever a framework defined
    /// on the element itself).
    fn set_value(&self, node: &Self::Node, value: &str);
    /// Selects all the content of an editing host.
    fn select_all_contents(&self, host: &Self::Node);
    /// Performs an edit with the browser's editing command (`execCommand`), which changes the
    /// document and fires `input`; `false` when the browser could not.
    fn exec_edit(&self, node: &Self::Node, edit: &Edit) -> bool;
    /// Selects `start..end` (UTF-16 offsets of a text control's value, or of an editor's text
    /// content) in `field`; a caret when they are equal.
    fn select_range(&self, field: &Self::Node, entry: TextEntry, start: usize, end: usize);
    /// The selection's offsets in `field` (as [`Dom::select_range`] takes them); `None` when
    /// the document's selection is not inside it.
    fn selection_range(&self, field: &Self::Node, entry: TextEntry) -> Option<(usize, usize)>;
    /// Dispatches one HTML5 drag and drop event at `at` with the drag's `DataTransfer` (made
    /// at `dragstart`, kept until `dragend`); `false` when a listener cancelled it.
    fn dispatch_drag(&self, node: &Self::Node, kind: crate::input::DragKind, at: Point) -> bool;
    /// Dispatches a `paste` whose clipboard holds `text`; `false` when a listener handled it.
    fn paste(&self, node: &Self::Node, text: &str) -> bool;
    /// Starts watching `node`'s document for any change.
    fn watch(&self, node: &Self::Node) -> Self::Watch;
    /// Whether the document changed since `watch` started (dropping it stops watching).
    fn saw_change(&self, watch: &Self::Watch) -> bool;
    /// Lets the page's already queued microtasks run (between a press and its release).
    fn microtask(&self) -> impl Future<Output = ()>;
    /// Whether this call's input goes through Chrome's debugger (the user turned trusted input on
    /// for the page's origin): then [`Dom::perform_trusted`] performs what the input module
    /// decided, and the page's scripts see events whose `isTrusted` is true.
    fn trusted_input(&self) -> bool;
    /// `at`, a point of `node`'s document's viewport, in the top document's viewport (where
    /// trusted input aims: an element of a same-origin `<iframe>` is offset by its frame).
    fn top_point(&self, node: &Self::Node, at: Point) -> Point;
    /// Has the service worker perform DevTools `Input` commands through Chrome's debugger
    /// (`bridge::trusted_input`); `Err` says why it could not.
    fn perform_trusted(
        &self,
        commands: Vec<bridge::trusted_input::Command>,
    ) -> impl Future<Output = Result<(), bridge::WireError>>;

    /// A `<select>`'s options as (value, trimmed text); `None` when it is no `<select>`.
    fn options(&self, node: &Self::Node) -> Option<Vec<(String, String)>>;
    fn set_selected_index(&self, node: &Self::Node, index: usize);
    /// The root element of a same-origin `<iframe>`'s document.
    fn frame_root(&self, node: &Self::Node) -> Option<Self::Node>;
    /// Dispatches `input` and `change` after a `<select>`'s choice.
    fn dispatch_select_input(&self, node: &Self::Node);
    fn dispatch_change(&self, node: &Self::Node);
    /// What a browser does after Enter in a text field of a form (implicit submission): clicks the
    /// form's default button, or submits a form whose only text field this is. Nothing outside a form.
    fn submit_implicitly(&self, node: &Self::Node);
    /// A same-origin GET of `path` (starting with `/`, checked), with the page's cookies and
    /// `Accept: accept`, reading at most `max_bytes` of the body. Dropping the future aborts
    /// the request (the interpreter does so on timeout and cancellation).
    fn fetch(
        &self,
        path: &str,
        accept: &str,
        max_bytes: usize,
    ) -> impl Future<Output = Result<HttpResponse, FetchFailure>>;

    /// Tells the page's dialog handling (`extension/dialogs.js`) how to answer its next dialog.
    fn answer_next_dialog(&self, answer: &bridge::dialog::DialogAnswer);

    /// The files the call carries (the server read them from the user's uploads directory).
    fn call_files(&self) -> Rc<[UploadFile]>;
    /// Puts `files` on file input `node` as a choice in the file picker does (its `files`, then
    /// `input` and `change`); answers how many files it holds once set (before its events: a page may empty it in its
    /// `change` handler).
    fn set_input_files(&self, node: &Self::Node, files: &[&UploadFile]) -> Result<usize, String>;
    /// What a person's drop of `files` from the desktop on `node` fires: `dragenter`, `dragover`,
    /// and `drop` when the page cancelled `dragover` (it takes the drop; else `dragleave`).
    /// Answers whether it took them.
    fn drop_files(&self, node: &Self::Node, files: &[&UploadFile]) -> Result<bool, String>;

    /// Forgets what [`Dom::leaving`] saw so far (before an action that may navigate).
    fn watch_leaving(&self);
    /// Whether the page started leaving for another document since [`Dom::watch_leaving`].
    fn leaving(&self) -> Leaving;
    /// Resolves as soon as [`Dom::leaving`] may have changed, or after `max_ms`.
    fn leaving_changed(&self, max_ms: f64) -> impl Future<Output = ()>;

    fn now_ms(&self) -> f64;
    /// The page's own address (`location.href`).
    fn url(&self) -> String;
    /// Resolves on the next DOM change or after `max_ms`, whichever comes first.
    fn settle(&self, max_ms: f64) -> impl Future<Output = ()>;
    /// Lets the page run what its handlers queued (microtasks and zero-delay timers: a framework's
    /// model updates and re-renders) before the next action, as it runs between two inputs of a person.
    /// Ends early when the page starts leaving for another document (the call answers before the
    /// page is gone).
    fn checkpoint(&self) -> impl Future<Output = ()>;
}
